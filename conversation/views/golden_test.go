package views

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/schemas"
)

// baseTime is the time of the first event a golden file appends; each
// further event is a second later.
var baseTime = time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)

// golden runs one testdata file against a real log and projection store:
//
//	append conv=P/C        lines "<type> [id=..] [cause=..] <data JSON>"; a
//	                       leading '!' skips the schema check (a bad event);
//	                       a type starting "jido." is bookkeeping, taken as is
//	request conv=P/C       the messages the next LLM call sends
//	show conv=P/C view=V [at=SEQ]
//	                       the read model, rendered; without at it is read from
//	                       the store after a catch-up and checked against a
//	                       fresh fold of the log
//	resume conv=P/C        appends Interruptions of the stored status
//	fork conv=P/C at=SEQ as=P/C2
//	                       appends Fork's events to the new conversation
//	options messages=N tokens=M
//	                       restarts the runner with these llm_context bounds
type golden struct {
	t      *testing.T
	log    *eventlog.Log
	store  *projections.Store
	runner *projections.Runner
	reg    *schemas.Registry
	n      int    // events appended so far, for ids and times
	lastID string // id of the last event appended
}

func TestGolden(t *testing.T) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if filepath.Ext(path) != ".txt" {
			return // testdata/rebuild: TestRebuildMatchesGolden's
		}
		dir := t.TempDir()
		l, err := eventlog.Open(filepath.Join(dir, "log"), eventlog.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		s, err := projections.OpenStore(filepath.Join(dir, "projections"), projections.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		g := &golden{t: t, log: l, store: s, reg: reg}
		g.newRunner(Options{})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := g.run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

func (g *golden) newRunner(opts Options) {
	r, err := projections.NewRunner(g.log, g.store, projections.Options{CacheStates: 2, CheckpointEvery: 3}, Projections(opts)...)
	if err != nil {
		g.t.Fatal(err)
	}
	g.runner = r
}

func arg(d *datadriven.TestData, key string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return ""
}

func argInt(d *datadriven.TestData, key string) int {
	n, _ := strconv.Atoi(arg(d, key))
	return n
}

func (g *golden) run(d *datadriven.TestData) (string, error) {
	ctx := context.Background()
	conv := arg(d, "conv")
	switch d.Cmd {
	case "append":
		var events []bus.Signal
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			ev, err := g.parseEvent(conv, line)
			if err != nil {
				return "", err
			}
			events = append(events, ev)
		}
		res, err := g.log.Append(ctx, conversation.Stream(conv), eventlog.AnyVersion, events...)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("seq %d..%d\n", res.Positions[0].Seq, res.Version), nil
	case "show":
		view := arg(d, "view")
		var st projections.State
		if at := argInt(d, "at"); at > 0 {
			var err error
			if st, err = g.runner.At(ctx, view, conv, projections.Until{Seq: uint64(at)}); err != nil {
				return "", err
			}
		} else {
			if err := g.runner.CatchUp(ctx, nil); err != nil {
				return "", err
			}
			var err error
			if st, err = g.runner.Get(view, conv); err != nil {
				return "", err
			}
			fresh, err := g.runner.At(ctx, view, conv, projections.Until{})
			if err != nil {
				return "", err
			}
			if !jsonEqual(st.State, fresh.State) {
				g.t.Errorf("%s: the runner's state differs from a fresh fold:\nrunner %s\nfresh  %s", d.Pos, st.State, fresh.State)
			}
		}
		var b bytes.Buffer
		if err := Render(&b, view, st.State); err != nil {
			return "", err
		}
		return b.String(), nil
	case "request":
		if err := g.runner.CatchUp(ctx, nil); err != nil {
			return "", err
		}
		st, err := g.runner.Get(ViewLLMContext, conv)
		if err != nil {
			return "", err
		}
		var c LLMContext
		if err := json.Unmarshal(st.State, &c); err != nil {
			return "", err
		}
		var b bytes.Buffer
		renderMessages(&b, c.Request())
		return b.String(), nil
	case "resume":
		if err := g.runner.CatchUp(ctx, nil); err != nil {
			return "", err
		}
		st, err := g.runner.Get(ViewStatus, conv)
		if err != nil {
			return "", err
		}
		var status Status
		if err := json.Unmarshal(st.State, &status); err != nil {
			return "", err
		}
		events, err := Interruptions(conv, &status, g.nextTime(), "the node restarted")
		if err != nil {
			return "", err
		}
		return g.appendGenerated(conv, events, eventlog.AnyVersion)
	case "fork":
		var entries []eventlog.Entry
		for e, err := range g.log.ReadStream(conversation.Stream(conv), eventlog.ReadOptions{}) {
			if err != nil {
				return "", err
			}
			entries = append(entries, e)
		}
		events, err := Fork(conv, entries, uint64(argInt(d, "at")), arg(d, "as"), g.nextTime())
		if err != nil {
			return "", err
		}
		return g.appendGenerated(arg(d, "as"), events, eventlog.NoStream)
	case "options":
		g.newRunner(Options{LLMContext: LLMContextOptions{MaxMessages: argInt(d, "messages"), MaxTokens: argInt(d, "tokens")}})
		return "ok\n", nil
	}
	return "", fmt.Errorf("unknown command %q", d.Cmd)
}

// appendGenerated checks events against their schemas, appends them to the
// conversation and lists them.
func (g *golden) appendGenerated(conv string, events []bus.Signal, expected eventlog.ExpectedVersion) (string, error) {
	var b strings.Builder
	for _, ev := range events {
		if err := g.validate(ev); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s id=%s cause=%s", strings.TrimPrefix(ev.Type(), "conversation."), ev.ID(), conversation.CausationID(ev))
		if p := conversation.ParentID(ev); p != "" {
			fmt.Fprintf(&b, " parent=%s", p)
		}
		fmt.Fprintf(&b, " %s\n", ev.Data())
	}
	if len(events) == 0 {
		return "nothing to append\n", nil
	}
	res, err := g.log.Append(context.Background(), conversation.Stream(conv), expected, events...)
	if err != nil {
		return "", err
	}
	dups := 0
	for _, p := range res.Positions {
		if p.Duplicate {
			dups++
		}
	}
	fmt.Fprintf(&b, "appended %d, duplicates %d\n", len(events)-dups, dups)
	return b.String(), nil
}

func (g *golden) nextTime() time.Time {
	g.n++
	return baseTime.Add(time.Duration(g.n) * time.Second)
}

// parseEvent reads "<type> [id=..] [cause=..] <data JSON>".
func (g *golden) parseEvent(conv, line string) (bus.Signal, error) {
	check := true
	if strings.HasPrefix(line, "!") {
		check, line = false, line[1:]
	}
	typ, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	if strings.HasPrefix(typ, "jido.") {
		check = false
	} else {
		typ = "conversation." + typ
	}
	at := g.nextTime()
	id, cause := fmt.Sprintf("e%d", g.n), g.lastID
	for {
		rest = strings.TrimSpace(rest)
		if v, ok := strings.CutPrefix(rest, "id="); ok {
			id, rest, _ = strings.Cut(v, " ")
		} else if v, ok := strings.CutPrefix(rest, "cause="); ok {
			cause, rest, _ = strings.Cut(v, " ")
		} else {
			break
		}
	}
	if rest == "" {
		rest = "{}"
	}
	var data conversation.Data
	if check {
		if err := json.Unmarshal([]byte(rest), &data); err != nil {
			return bus.Signal{}, fmt.Errorf("%s: %v", line, err)
		}
		if data.CallID != "" && typ != conversation.ToolRequested && cause == g.lastID {
			cause = data.CallID // a tool call's outcome answers its call id
		}
	}
	if cause == "" {
		cause = "request-0"
	}
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource("/test/" + conv)
	s.SetTime(at)
	s.SetExtension(bus.ExtCausationID, cause)
	if err := bus.SetJSONData(&s, json.RawMessage(rest)); err != nil {
		return bus.Signal{}, err
	}
	g.lastID = id
	if check {
		if err := g.validate(s); err != nil {
			return bus.Signal{}, err
		}
	}
	return s, nil
}

func (g *golden) validate(s bus.Signal) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return g.reg.Validate(s.Type(), v)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

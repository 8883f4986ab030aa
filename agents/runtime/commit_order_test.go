package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Commit, then act, as a trace. A recording store notes every append the
// runtime makes (with what it carries) and its durable return; recording
// executors note every emit and schedule they run; a caller's reply names
// the end of the append it followed. testdata/commit_order shows, case by
// case, that nothing runs and nobody is answered before the decision is
// durable.
//
// The log syncs inside Append (group commit: the append returns once its
// batch is fsynced, eventlog/commit.go), so "sync" is Append's return:
// the moment the runtime may rely on the decision.
//
// Commands:
//
//	start id=<agent>              start a "trace" agent
//	call id=<agent> signal=<id> type=<type>
//	                              call and wait for the reply and for every
//	                              directive it queued to have run
//	cast id=<agent> signal=<id> type=<type>
//	                              cast; waits as call does, or, while the
//	                              appends are held, until the signal waits
//	hold id=<agent>               hold the next append to the agent's stream
//	release                       let it go, and wait as call does
//	fail-append                   the next append is refused, writing nothing
//	crash-after-append            the next append is written, then the
//	                              process dies: it does nothing more
//	restart                       a new process on the same log recovers
//
// Each command prints the trace since the one before.
func TestCommitThenActTrace(t *testing.T) {
	datadriven.Walk(t, "testdata/commit_order", func(t *testing.T, path string) {
		tt := newTraceTest(t)
		datadriven.RunTest(t, path, tt.run)
	})
}

// traceDefinition is an agent whose signals decide nothing (trace.quiet),
// one emit (trace.note) or an emit and a schedule (trace.go).
func traceDefinition(t testing.TB) *agents.Definition {
	count := func(env agents.Env) []agents.StateOp {
		return []agents.StateOp{agents.Set{Values: map[string]any{"n": env.State.Number("n") + 1}}}
	}
	def, err := agents.Define(agents.Spec{
		Name:   "trace",
		Schema: `{"type":"object"}`,
		Actions: []agents.Action{
			{Name: "quiet", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
				return agents.Result{Ops: count(env)}, nil
			}},
			{Name: "note", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
				e, err := agents.NewEmit("trace.noted", nil)
				return agents.Result{Ops: count(env), Directives: []agents.Directive{e}}, err
			}},
			{Name: "go", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
				e, err := agents.NewEmit("trace.done", nil)
				if err != nil {
					return agents.Result{}, err
				}
				later, err := agents.NewSignal("trace.later", nil)
				return agents.Result{Ops: count(env), Directives: []agents.Directive{e, agents.Schedule{Delay: time.Hour, Signal: later}}}, err
			}},
		},
		Routes: []agents.Route{
			{Pattern: "trace.quiet", Action: "quiet"},
			{Pattern: "trace.note", Action: "note"},
			{Pattern: "trace.go", Action: "go"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// trace is what happened, in order, over every process of a test.
type trace struct {
	mu    sync.Mutex
	lines []string
}

func (tr *trace) add(format string, args ...any) {
	tr.mu.Lock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
	tr.mu.Unlock()
}

// lastWrite returns the last line since the last take that says how an
// append ended: its sync, its refusal, the crash after it.
func (tr *trace) lastWrite() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for i := len(tr.lines) - 1; i >= 0; i-- {
		if l := tr.lines[i]; strings.HasPrefix(l, "sync ") || strings.HasPrefix(l, "refused:") || l == "crash" {
			return l
		}
	}
	return "no append"
}

// take returns the lines since the last take.
func (tr *trace) take() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := strings.Join(tr.lines, "\n")
	tr.lines = nil
	if out == "" {
		return "(nothing)"
	}
	return out
}

var (
	errInjected = errors.New("injected append failure")
	errDead     = errors.New("the process died")
)

// recordingStore is one process's view of the log: it records every
// append and its durable return, and can hold, refuse or die after one.
type recordingStore struct {
	Store
	tr *trace

	mu       sync.Mutex
	dead     bool          // crashed: nothing it does is recorded or written
	hold     string        // the stream whose next append waits for release
	held     chan struct{} // closed when that append waits
	release  chan struct{}
	failNext bool
	crash    bool
}

func (r *recordingStore) Append(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error) {
	res, err := r.AppendMulti(ctx, []eventlog.StreamAppend{{Stream: stream, Expected: expected, Events: events}})
	if err != nil {
		return eventlog.AppendResult{}, err
	}
	return res[0], nil
}

func (r *recordingStore) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	r.mu.Lock()
	if r.dead {
		r.mu.Unlock()
		return nil, errDead
	}
	var wait, held chan struct{}
	for _, p := range parts {
		if p.Stream == r.hold {
			r.hold, wait, held = "", r.release, r.held
		}
	}
	fail, crash := r.failNext, r.crash
	r.failNext, r.crash = false, false
	r.mu.Unlock()

	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(" + ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Stream, describeEvents(p.Events))
	}
	r.tr.add("append %s", b.String())
	if held != nil {
		close(held)
	}
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done(): // the runtime closes (a test that failed)
			return nil, ctx.Err()
		}
	}
	if fail {
		r.tr.add("refused: %v", errInjected)
		return nil, errInjected
	}
	res, err := r.Store.AppendMulti(ctx, parts)
	if err != nil {
		r.tr.add("refused: %v", err)
		return nil, err
	}
	b.Reset()
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s at %d", p.Stream, res[i].Version)
	}
	r.tr.add("sync %s", b.String())
	if crash {
		r.mu.Lock()
		r.dead = true
		r.mu.Unlock()
		r.tr.add("crash")
		return nil, errDead
	}
	return res, nil
}

func (r *recordingStore) isDead() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dead
}

// describeEvents names what an append carries: a signal by type and id, a
// cmd record by the version it reaches and how many directives it holds,
// other records by type.
func describeEvents(events []bus.Signal) string {
	out := make([]string, len(events))
	for i, e := range events {
		switch e.Type() {
		case TypeCmd:
			var cr cmdRecord
			if err := decodeCmdRecord(e.Data(), &cr); err != nil {
				out[i] = "cmd ?" + err.Error()
				continue
			}
			n := -1
			if cr.Count != nil {
				n = *cr.Count
			}
			out[i] = fmt.Sprintf("cmd v%d (%d directives)", cr.Version, n)
		case TypeStarted, TypeRegistered, TypeEffects, TypeStopped, TypeDeregistered:
			out[i] = e.Type()
		default:
			out[i] = e.Type() + " " + e.ID()
		}
	}
	return strings.Join(out, ", ")
}

// recordingExec runs a built-in executor and records that it did, with
// the directive's input and index.
func recordingExec(tr *trace, store func() *recordingStore, inner DirectiveExec) DirectiveExec {
	return ExecFunc(func(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
		if !store().isDead() {
			what := ""
			switch d := d.(type) {
			case agents.Emit:
				what = d.Signal.Type()
			case agents.Schedule:
				what = d.Signal.Type()
			}
			line := fmt.Sprintf("exec %s %s #%d of %s", d.DirectiveKind(), what, x.Index, x.Input.ID())
			if x.Recovered {
				line += " (recovered)"
			}
			tr.add("%s", line)
		}
		return inner.Exec(ctx, d, x)
	})
}

type traceTest struct {
	t     *testing.T
	h     *harness
	tr    *trace
	store *recordingStore
}

func newTraceTest(t *testing.T) *traceTest {
	tt := &traceTest{t: t, tr: &trace{}}
	current := func() *recordingStore { return tt.store }
	builtin := builtinExecutors()
	tt.h = newHarness(t, func(cfg *Config) {
		if err := cfg.Types.Register(traceDefinition(t)); err != nil {
			t.Fatal(err)
		}
		cfg.Executors[agents.KindEmit] = recordingExec(tt.tr, current, builtin[agents.KindEmit])
		cfg.Executors[agents.KindSchedule] = recordingExec(tt.tr, current, builtin[agents.KindSchedule])
		// Outcomes ride in the next decision or are recorded at Shutdown,
		// never by the recorder at a moment of its own choosing.
		cfg.EffectsLinger = time.Hour
		cfg.PassivateAfter = -1
	})
	tt.useStore()
	return tt
}

// useStore puts a recording store for this process in front of the
// harness's log; nothing appends yet.
func (tt *traceTest) useStore() {
	tt.store = &recordingStore{Store: tt.h.log, tr: tt.tr}
	tt.h.rt.cfg.Store = tt.store
}

func (tt *traceTest) run(t *testing.T, d *datadriven.TestData) string {
	h := tt.h
	arg := func(key string) string {
		var v string
		d.ScanArgs(t, key, &v)
		return v
	}
	switch d.Cmd {
	case "start":
		if _, err := h.rt.Start(t.Context(), StartRequest{Type: "trace", ID: arg("id"), Options: Options{SnapshotEvery: MaxSnapshotEvery}}); err != nil {
			tt.tr.add("start error: %v", err)
		}
	case "call":
		// The reply and the directives' executions are concurrent (the
		// directives are queued before the caller is answered), so the
		// reply is shown last, with the end of the append it followed.
		id, sig := arg("id"), tt.signal(arg("signal"), arg("type"))
		done := make(chan string, 1)
		err := h.rt.Deliver(id, sig, func(r Reply, err error) {
			switch {
			case tt.store.isDead():
				done <- "" // a dead process answers no one
			case err != nil:
				done <- fmt.Sprintf("reply error: %v (after %s)", err, tt.tr.lastWrite())
			default:
				done <- fmt.Sprintf("reply v%d %s (after %s)", r.Version, r.State, tt.tr.lastWrite())
			}
		})
		if err != nil {
			tt.tr.add("refused: %v", err)
			break
		}
		var reply string
		select {
		case reply = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no reply to %s", sig.ID())
		}
		tt.h.settle(id)
		if reply != "" {
			return tt.tr.take() + "\n" + reply
		}
	case "cast":
		id, sig := arg("id"), tt.signal(arg("signal"), arg("type"))
		if err := h.rt.Cast(id, sig); err != nil {
			tt.tr.add("refused: %v", err)
			break
		}
		tt.store.mu.Lock()
		held, holding := tt.store.held, tt.store.release != nil
		tt.store.mu.Unlock()
		if holding {
			// The first cast reaches the held append; the later ones
			// wait in the inbox behind it.
			select {
			case <-held:
			case <-time.After(10 * time.Second):
				t.Fatalf("the append of %s was never held", sig.ID())
			}
			break
		}
		tt.h.settle(id)
	case "hold":
		tt.store.mu.Lock()
		tt.store.hold = "agent/" + arg("id")
		tt.store.held, tt.store.release = make(chan struct{}), make(chan struct{})
		tt.store.mu.Unlock()
		return "ok"
	case "release":
		tt.store.mu.Lock()
		release := tt.store.release
		tt.store.release = nil
		tt.store.mu.Unlock()
		close(release)
		tt.settleAll()
	case "fail-append":
		tt.store.mu.Lock()
		tt.store.failNext = true
		tt.store.mu.Unlock()
		return "ok"
	case "crash-after-append":
		tt.store.mu.Lock()
		tt.store.crash = true
		tt.store.mu.Unlock()
		return "ok"
	case "restart":
		if err := h.rt.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := h.log.Close(); err != nil {
			t.Fatal(err)
		}
		h.openLog()
		h.startRuntime()
		tt.useStore()
		tt.tr.add("recover")
		n, err := h.rt.Recover(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		tt.settleAll()
		// The count comes last: the recovered agents run while Recover
		// returns.
		return fmt.Sprintf("%s\nrecovered %d agents", tt.tr.take(), n)
	default:
		t.Fatalf("unknown command %s", d.Cmd)
	}
	return tt.tr.take()
}

// signal is a trace signal with a given id.
func (tt *traceTest) signal(id, typ string) bus.Signal {
	s := signal(tt.t, typ, nil)
	s.SetID(id)
	return s
}

func (tt *traceTest) settleAll() {
	tt.h.rt.mu.RLock()
	var ids []string
	for id := range tt.h.rt.agents {
		ids = append(ids, id)
	}
	tt.h.rt.mu.RUnlock()
	for _, id := range ids {
		tt.h.settle(id)
	}
}

package views

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// rebuildGolden holds (gzipped: it is some 2 MB of JSON) every read model's stored state, and every event as
// Decode reads it, after a rebuild of the log richCorpus writes. It was
// written by the code before the rebuild's speed-ups (issue 24); a change
// that alters one byte of a state or of a decoded event fails
// TestRebuildMatchesGolden. Rewrite it with -update-rebuild only for a
// change of the read models' meaning (which also changes their Version).
const rebuildGolden = "testdata/rebuild/states.golden.gz"

var updateRebuild = flag.Bool("update-rebuild", false, "rewrite "+rebuildGolden)

// TestRebuildMatchesGolden rebuilds a rich log — the conversations of
// every golden file, forks and resumes included, and generated ones with
// tool calls in and out of order, approvals, hooks, compactions, budgets,
// modes, delegation, rewinds (forks whose tool results list files),
// failures, invalid data and unknown members — into the four read models,
// with a tiny cache and frequent checkpoints (states evicted, re-read and
// re-encoded) and with the defaults, and compares every state's stored
// bytes and every decoded event with the golden file.
func TestRebuildMatchesGolden(t *testing.T) {
	dir := t.TempDir()
	l, err := eventlog.Open(filepath.Join(dir, "log"), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	richCorpus(t, l)

	var dumps [][]byte
	for i, opts := range []projections.Options{{CacheStates: 3, CheckpointEvery: 7}, {}} {
		s, err := projections.OpenStore(filepath.Join(dir, fmt.Sprintf("projections-%d", i)), projections.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := projections.NewRunner(l, s, opts, Projections(Options{})...)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.CatchUp(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, dumpStates(t, r))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(dumps[0], dumps[1]) {
		t.Fatal("the states of a rebuild with a tiny cache differ from those with the defaults")
	}
	got := append(dumps[0], dumpDecoded(t, l)...)
	if *updateRebuild {
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		if _, err := w.Write(got); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rebuildGolden, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGzip(t, rebuildGolden)
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s line %d differs:\ngot  %s\nwant %s", rebuildGolden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: got %d lines, want %d", rebuildGolden, len(gl), len(wl))
	}
}

func readGzip(t *testing.T, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// dumpStates lists every state of every read model: "<view> <key>" and
// the stored bytes on the next line.
func dumpStates(t *testing.T, r *projections.Runner) []byte {
	var b bytes.Buffer
	for _, view := range Views() {
		keys, err := r.Keys(view, "", "", 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) < 40 {
			t.Fatalf("%s has %d states: the corpus is not in the log", view, len(keys))
		}
		for _, key := range keys {
			st, err := r.Get(view, key)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s\n%s\n", view, key, st.State)
		}
	}
	return b.Bytes()
}

// dumpDecoded lists every conversation event of the log as Decode reads
// it, encoded with encoding/json.
func dumpDecoded(t *testing.T, l *eventlog.Log) []byte {
	var b bytes.Buffer
	for e, err := range l.ReadAll(eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		j, err := json.Marshal(Decode(e))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "decoded %s %d\n%s\n", e.Stream, e.Seq, j)
	}
	return b.Bytes()
}

// richCorpus appends the conversations of every golden file (each under
// a project named after its file) and generated ones to l.
func richCorpus(t *testing.T, l *eventlog.Log) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("golden files: %v", err)
	}
	for _, path := range files {
		prefix := strings.TrimSuffix(filepath.Base(path), ".txt") + "-"
		g := &golden{t: t, log: l, reg: reg}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			conv := prefix + arg(d, "conv")
			switch d.Cmd {
			case "append":
				var events []bus.Signal
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					ev, err := g.parseEvent(conv, line)
					if err != nil {
						t.Fatal(err)
					}
					events = append(events, ev)
				}
				appendEvents(t, l, conv, events)
			case "fork":
				// Some forks are refused on purpose (their expected
				// output is the error); the others are appended.
				if events, err := Fork(conv, streamEntries(t, l, conv), uint64(argInt(d, "at")), prefix+arg(d, "as"), g.nextTime()); err == nil {
					appendEvents(t, l, prefix+arg(d, "as"), events)
				}
			case "resume":
				resumeAt(t, l, conv, g.nextTime())
			}
			return d.Expected // the corpus is compared as a whole, not here
		})
	}
	rng := rand.New(rand.NewPCG(24, 1))
	for i := range 40 {
		gen := &convGen{t: t, l: l, rng: rng, key: fmt.Sprintf("gen%d/c%d", i%5, i), at: baseTime.Add(time.Duration(i) * time.Hour)}
		gen.run()
	}
}

func appendEvents(t *testing.T, l *eventlog.Log, conv string, events []bus.Signal) {
	t.Helper()
	if _, err := l.Append(context.Background(), conversation.Stream(conv), eventlog.AnyVersion, events...); err != nil {
		t.Fatal(err)
	}
}

func streamEntries(t *testing.T, l *eventlog.Log, conv string) []eventlog.Entry {
	var entries []eventlog.Entry
	for e, err := range l.ReadStream(conversation.Stream(conv), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	return entries
}

func forkTo(t *testing.T, l *eventlog.Log, conv string, at uint64, as string, now time.Time) {
	events, err := Fork(conv, streamEntries(t, l, conv), at, as, now)
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, l, as, events)
}

func resumeAt(t *testing.T, l *eventlog.Log, conv string, now time.Time) {
	st := NewStatus()
	for _, e := range streamEntries(t, l, conv) {
		if bus.MatchPattern(conversation.TypePattern, e.Event.Type()) {
			st.Fold(Decode(e))
		}
	}
	events, err := Interruptions(conv, st, now, "the node restarted")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) > 0 {
		appendEvents(t, l, conv, events)
	}
}

// convGen writes one generated conversation: turns of model calls, tool
// calls and their outcomes, with the rarer events mixed in at random.
type convGen struct {
	t     *testing.T
	l     *eventlog.Log
	rng   *rand.Rand
	key   string
	at    time.Time
	n     int
	last  string
	calls int
}

// texts exercise the encoders' and the decoder's escapes.
var texts = []string{
	"Please look at the failing test in parser_test.go and fix it.",
	"Line one\nline two\ttabbed \"quoted\" back\\slash",
	"HTML <b>bold</b> & ampersand",
	"unicode: é ü 日本語 emoji 😀 separators \u2028 \u2029",
	"control \u0001 and \u001f",
	"",
	strings.Repeat("long text ", 30),
}

func (g *convGen) text() string { return texts[g.rng.IntN(len(texts))] }

// emit appends one event; data is JSON text, or any value encoded as JSON.
func (g *convGen) emit(typ, id, cause string, data any) string {
	g.n++
	if id == "" {
		id = fmt.Sprintf("%s.e%d", g.key, g.n)
	}
	if cause == "" {
		cause = g.last
	}
	if cause == "" {
		cause = "request-0"
	}
	var raw []byte
	switch d := data.(type) {
	case string:
		raw = []byte(d)
	default:
		var err error
		if raw, err = json.Marshal(d); err != nil {
			g.t.Fatal(err)
		}
	}
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource("/gen/" + g.key)
	s.SetTime(g.at.Add(time.Duration(g.n) * time.Second))
	s.SetExtension(bus.ExtCausationID, cause)
	if g.rng.IntN(7) == 0 {
		s.SetExtension(conversation.ExtParentID, "parent."+id)
	}
	s.SetData("application/json", raw)
	appendEvents(g.t, g.l, g.key, []bus.Signal{s})
	g.last = id
	return id
}

type obj = map[string]any

func (g *convGen) run() {
	r := g.rng
	started := obj{"project_id": strings.Split(g.key, "/")[0], "conversation_id": strings.Split(g.key, "/")[1], "system": "You are a coding assistant.", "assistant": true, "loop": 2, "mode": []string{"auto", "ask", "plan"}[r.IntN(3)]}
	if r.IntN(2) == 0 {
		started["title"] = g.text()
		started["llm"] = obj{"provider": "openai", "model": "m2", "temperature": 0.25, "max_tokens": 900, "timeout_ms": 60000}
		started["limits"] = obj{"max_steps": 9, "max_tool_calls": 20, "parallel_tools": 2}
		started["budget"] = obj{"max_tokens": 50000, "max_cost_usd": 1.5}
		started["worktree"] = obj{"branch": "jido/" + g.key, "path": "/w/" + g.key}
		started["tools"] = []string{"read_file", "write_file", "delegate"}
	}
	if r.IntN(4) == 0 {
		started["delegated"] = obj{"conversation": "gen0/c0", "call_id": "k1", "depth": 1}
	}
	g.emit(conversation.Started, "", "", started)
	turns := 2 + r.IntN(6)
	dropped := 0
	for turn := range turns {
		g.emit(conversation.UserMessage, "", "", obj{"text": g.text()})
		if r.IntN(5) == 0 {
			g.emit(conversation.HookDecided, "", "", obj{"hook": "turn.start", "decision": "allow", "via": "nats", "turn": turn + 1})
		}
		for step := 1; step <= 1+r.IntN(4); step++ {
			req := g.llmCall(step, &dropped)
			if req == "" {
				continue
			}
			g.answer(req)
		}
		g.rare(turn)
	}
	switch r.IntN(4) {
	case 0:
		g.emit(conversation.Stopped, "", "", obj{"reason": []string{"completed", "failed", "cancelled"}[r.IntN(3)]})
	case 1:
		g.emit(conversation.Cancel, "", "", obj{"reason": "enough"})
	}
	if r.IntN(3) == 0 {
		entries := streamEntries(g.t, g.l, g.key)
		at := entries[r.IntN(len(entries))].Seq
		forkTo(g.t, g.l, g.key, max(at, 1), g.key+"-fork", g.at.Add(time.Hour))
	}
	if r.IntN(4) == 0 {
		resumeAt(g.t, g.l, g.key, g.at.Add(2*time.Hour))
	}
}

// llmCall requests a model call and answers it, or fails it; it returns
// the request's id when the model answered.
func (g *convGen) llmCall(step int, dropped *int) string {
	r := g.rng
	data := obj{"model": "m1", "provider": "openai", "step": step, "attempt": 1 + r.IntN(2), "window": 128000, "context_tokens": 1000 + r.IntN(5000)}
	if r.IntN(6) == 0 {
		*dropped += 1 + r.IntN(3)
		data["context_dropped"] = *dropped
	}
	if r.IntN(3) == 0 {
		data["instructions"] = []string{"AGENTS.md"}
	}
	req := g.emit(conversation.LLMRequested, "", "", data)
	if r.IntN(8) == 0 {
		failed := obj{"error": obj{"type": []string{"rate_limited", "server", "interrupted"}[r.IntN(3)], "message": "try later <soon>"}, "attempt": 1, "retryable": r.IntN(2) == 0, "latency_ms": 40}
		if r.IntN(2) == 0 {
			failed["retry_in_ms"], failed["status"] = 1500, 429
		}
		g.emit(conversation.LLMFailed, "", req, failed)
		return ""
	}
	done := obj{"model": "m1", "usage": obj{"input_tokens": 1000 + r.IntN(900), "output_tokens": 10 + r.IntN(300)}, "latency_ms": 300 + r.IntN(900), "stop_reason": "end_turn"}
	if r.IntN(2) == 0 {
		done["cost_usd"] = 0.001 * float64(1+r.IntN(9))
	}
	calls := r.IntN(4)
	done["tool_calls"] = calls
	g.emit(conversation.LLMCompleted, "", req, done)
	return req
}

// answer writes the model's answer to request req: text, tool calls and
// their outcomes, some out of order.
func (g *convGen) answer(req string) {
	r := g.rng
	calls := r.IntN(4)
	textFirst := r.IntN(2) == 0
	if textFirst || calls == 0 {
		g.emit(conversation.AssistantMessage, "", req, obj{"text": g.text(), "tool_calls": calls})
	}
	var ids []string
	for range calls {
		g.calls++
		id := fmt.Sprintf("k%d", g.calls)
		ids = append(ids, id)
		call := obj{"call_id": id, "name": []string{"read_file", "write_file", "run_command", "delegate"}[r.IntN(4)], "args": obj{"path": "a<b>.go", "n": []any{1, -2.5, true, nil}}}
		if r.IntN(10) == 0 {
			delete(call, "args")
			call["args_error"], call["args_text"] = "unexpected end of JSON input", `{"path":`
		}
		if r.IntN(9) == 0 {
			// The outcome arrives before its request.
			g.emit(conversation.ToolCompleted, "", id, obj{"call_id": id, "output": "early", "duration_ms": 3})
		}
		g.emit(conversation.ToolRequested, "", req, call)
	}
	if !textFirst && calls > 0 {
		g.emit(conversation.AssistantMessage, "", req, obj{"text": g.text(), "tool_calls": calls})
	}
	for _, id := range ids {
		g.outcome(id)
	}
}

// outcome closes tool call id in one of the ways a call ends.
func (g *convGen) outcome(id string) {
	r := g.rng
	if r.IntN(5) == 0 {
		g.emit(conversation.HookDecided, "", id, obj{"hook": "tool.before", "decision": "allow", "via": "command", "defaulted": r.IntN(2) == 0})
	}
	if r.IntN(6) == 0 {
		g.emit(conversation.ToolApprovalRequested, "", id, obj{"call_id": id, "name": "run_command", "args": obj{"cmd": "make"}, "reason": "asks", "timeout_ms": 300000})
		switch r.IntN(3) {
		case 0:
			g.emit(conversation.ToolApproval, "", id, obj{"call_id": id, "decision": "approve", "remember": "conversation", "by": "ana"})
		case 1:
			g.emit(conversation.ToolApproval, "", id, obj{"call_id": id, "decision": "deny", "by": "node", "reason": "timeout"})
			g.emit(conversation.ToolFailed, "", id, obj{"call_id": id, "error": obj{"type": "denied", "message": "denied by node"}})
			return
		default:
			return // left waiting
		}
	}
	if r.IntN(3) > 0 {
		g.emit(conversation.ToolStarted, "", id, obj{"call_id": id})
	}
	switch r.IntN(9) {
	case 0:
		g.emit(conversation.ToolFailed, "", id, obj{"call_id": id, "error": obj{"type": "exit", "message": "exit status 1"}, "duration_ms": 12, "cost_usd": 0.002})
	case 1:
		g.emit(conversation.ToolCancelled, "", id, obj{"call_id": id, "reason": "cancelled"})
	case 2:
		g.emit(conversation.ToolTimeout, "", id, obj{"call_id": id, "timeout_ms": 30000})
	case 3:
		g.emit(conversation.ToolCompleted, "", id, obj{"call_id": id, "output_ref": obj{"id": "sha256:ab12", "size": 70000, "media_type": "text/plain", "preview": "first\nbytes"}, "duration_ms": 8})
	case 4:
		g.emit(conversation.ToolCompleted, "", id, obj{"call_id": id, "output": obj{"ok": true, "lines": []string{"a", "<b>"}}, "files": []obj{{"path": "a.go", "before": "sha256:01", "after": "sha256:02"}}, "duration_ms": 5})
	case 5:
		g.emit(conversation.ToolCompleted, "", id, obj{"call_id": id, "output": "child answered", "conversation_id": "c-child", "cost_usd": 0.01, "duration_ms": 900})
	case 6:
		// Not an object: Invalid, counted by diagnostics only.
		g.emit(conversation.ToolCompleted, "", id, `["not","an","object"]`)
	default:
		g.emit(conversation.ToolCompleted, "", id, obj{"call_id": id, "output": g.text(), "duration_ms": 4})
	}
}

// rare writes, now and then, the events a turn seldom has.
func (g *convGen) rare(turn int) {
	r := g.rng
	switch r.IntN(10) {
	case 0:
		g.emit(conversation.CompactAsked, "", "", obj{"by": "alice", "reason": "long"})
		g.emit(conversation.Compacted, "", "", obj{"summary": "Summary of <all> so far.", "replaces": obj{"from_seq": 2, "to_seq": g.n - 1, "messages": 3 + turn, "answers": 1}, "tokens_before": 9000, "tokens_after": 800, "usage": obj{"input_tokens": 900, "output_tokens": 80}, "cost_usd": 0.003, "reason": "asked"})
	case 1:
		g.emit(conversation.CompactionFailed, "", "", obj{"error": obj{"type": "server", "message": "no summary"}, "reason": "auto"})
	case 2:
		g.emit(conversation.BudgetExceeded, "", "", obj{"what": "tokens", "limit": 50000, "used": 50100, "reason": "spent 50,100 of 50,000 tokens: raise the budget to go on"})
	case 3:
		g.emit(conversation.ModeChanged, "", "", obj{"mode": "plan", "by": "bob", "reason": "review first"})
	case 4:
		g.emit(conversation.Resume, "", "", obj{"reason": "go on"})
	case 5:
		g.emit(conversation.Cancel, "", "", obj{"reason": "wait"})
	case 6:
		// Duplicate members and members of another case: encoding/json's.
		g.emit(conversation.UserMessage, "", "", `{"text":"first","text":"second","Reason":"cased"}`)
	case 7:
		// Bookkeeping in the stream, which no read model selects.
		g.emit("jido.agent.cmd", "", "", obj{"version": g.n})
	case 8:
		g.emit(conversation.UserMessage, "", "", `{"text":null,"index":"x"}`)
	}
}

// TestFoldAfterEveryReloadMatches folds every conversation of the rich
// corpus twice into each read model: straight, and with the state encoded
// and decoded again after every event, as a Runner does when it evicts a
// state and reads it back from the store. What a read model keeps only in
// memory (Timeline's count of orphan outcomes) must not change the result.
func TestFoldAfterEveryReloadMatches(t *testing.T) {
	dir := t.TempDir()
	l, err := eventlog.Open(filepath.Join(dir, "log"), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	richCorpus(t, l)
	streams := l.Streams(conversation.StreamPrefix)
	if len(streams) < 40 {
		t.Fatalf("%d conversations in the corpus", len(streams))
	}
	for _, info := range streams {
		var entries []*projections.Entry
		for e, err := range l.ReadStream(info.Stream, eventlog.ReadOptions{Types: conversation.TypePattern}) {
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, projections.NewEntry(e))
		}
		foldBothWays[*Timeline](t, info.Stream, TimelineProjection{}, entries)
		foldBothWays[*LLMContext](t, info.Stream, LLMContextProjection{}, entries)
		foldBothWays[*Status](t, info.Stream, StatusProjection{}, entries)
		foldBothWays[*Diagnostics](t, info.Stream, DiagnosticsProjection{}, entries)
	}
}

func foldBothWays[S any](t *testing.T, stream string, p projections.Projection[S], entries []*projections.Entry) {
	t.Helper()
	straight, reloaded := p.Init(), p.Init()
	for _, e := range entries {
		straight = p.Apply(straight, e)
		reloaded = p.Apply(reloaded, e)
		b, err := json.Marshal(reloaded)
		if err != nil {
			t.Fatal(err)
		}
		var again S
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		reloaded = again
	}
	a, _ := json.Marshal(straight)
	b, _ := json.Marshal(reloaded)
	if !bytes.Equal(a, b) {
		t.Errorf("%s %s: folded straight\n%s\nreloaded after every event\n%s", p.Name(), stream, a, b)
	}
}

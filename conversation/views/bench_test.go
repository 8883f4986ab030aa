package views

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/eventlogtest"
	"github.com/jido-bus/jido-bus/projections"
)

// benchStep is one event of a turn: its type and data.
type benchStep struct {
	typ  string
	data string
}

// benchTurn is one cycle of a conversation's events; conversations repeat
// it (after conversation.started) until they have their share of events.
var benchTurn = []benchStep{
	{conversation.UserMessage, `{"text":"Please look at the failing test in parser_test.go and fix it."}`},
	{conversation.LLMRequested, `{"model":"m1"}`},
	{conversation.LLMCompleted, `{"model":"m1","usage":{"input_tokens":1200,"output_tokens":80},"latency_ms":900}`},
	{conversation.AssistantMessage, `{"text":"I will read the test first."}`},
	{conversation.ToolRequested, `{"call_id":"CALL","name":"read_file","args":{"path":"parser_test.go"}}`},
	{conversation.ToolStarted, `{"call_id":"CALL"}`},
	{conversation.ToolCompleted, `{"call_id":"CALL","output":"func TestParse(t *testing.T) { ... }","duration_ms":4}`},
	{conversation.LLMRequested, `{"model":"m1"}`},
	{conversation.LLMCompleted, `{"model":"m1","usage":{"input_tokens":1500,"output_tokens":120},"latency_ms":1100}`},
	{conversation.AssistantMessage, `{"text":"The test expects a trailing newline; the parser drops it. Fixed."}`},
}

// assistantTurn is benchTurn as the assistant's loop and executor write
// it: llm.requested names the step, attempt, provider and the context's
// window and size (and the instruction files sent), llm.completed the cost
// and the stop reason, conversation.started the loop's version and mode,
// and the tool call is a write_file whose result lists the file it
// changed. benchTurn has only the members the first read models used,
// which a rebuild from a real log does not see.
var assistantTurn = []benchStep{
	{conversation.UserMessage, `{"text":"Please look at the failing test in parser_test.go and fix it."}`},
	{conversation.LLMRequested, `{"attempt":1,"context_tokens":1180,"instructions":["AGENTS.md"],"model":"m1","provider":"openai","step":1,"window":128000}`},
	{conversation.LLMCompleted, `{"model":"m1","usage":{"input_tokens":1200,"output_tokens":80},"latency_ms":900,"stop_reason":"tool_use","tool_calls":1,"cost_usd":0.0042}`},
	{conversation.AssistantMessage, `{"text":"I will fix the test.","tool_calls":1}`},
	{conversation.ToolRequested, `{"call_id":"CALL","name":"write_file","args":{"path":"parser_test.go","content":"package parser\n"}}`},
	{conversation.ToolStarted, `{"call_id":"CALL"}`},
	{conversation.ToolCompleted, `{"call_id":"CALL","output":"wrote 15 bytes","duration_ms":4,"files":[{"path":"parser_test.go","before":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","after":"sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"}]}`},
	{conversation.LLMRequested, `{"attempt":1,"context_tokens":1490,"instructions":["AGENTS.md"],"model":"m1","provider":"openai","step":2,"window":128000}`},
	{conversation.LLMCompleted, `{"model":"m1","usage":{"input_tokens":1500,"output_tokens":120},"latency_ms":1100,"stop_reason":"end_turn","cost_usd":0.0061}`},
	{conversation.AssistantMessage, `{"text":"The test expects a trailing newline; the parser drops it. Fixed."}`},
}

// benchShape is how the fixture's conversations are written: their turn
// and the data of their conversation.started (%[1]d the project's number,
// %[2]d the conversation's).
type benchShape struct {
	name    string
	turn    []benchStep
	started string
}

var (
	benchShapeBench = benchShape{"bench", benchTurn, `{"project_id":"p%[1]d","conversation_id":"c%[2]d","system":"You are a coding assistant."}`}
	// benchShapeAssistant is a log as the assistant writes it.
	benchShapeAssistant = benchShape{"assistant", assistantTurn, `{"project_id":"p%[1]d","conversation_id":"c%[2]d","system":"You are a coding assistant.","assistant":true,"loop":2,"mode":"auto"}`}
)

type benchFixture struct {
	dir           string
	events, convs int
	keep          bool // in CONV_BENCH_DIR: not removed at the end
}

// benchDirEnv names a directory where the benchmark keeps its logs between
// runs: building the 1,000,000-event log takes longer than folding it.
const benchDirEnv = "CONV_BENCH_DIR"

var (
	fixtureMu sync.Mutex
	fixtures  = map[string]*benchFixture{}
)

// removeFixtures deletes the logs the benchmarks built.
func removeFixtures() {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	for _, f := range fixtures {
		if !f.keep {
			_ = os.RemoveAll(f.dir)
		}
	}
}

// fixture builds, once per process, a log of events conversation events
// across convs conversations. Conversations run a hundred at a time,
// interleaved event by event, as concurrent conversations do.
func fixture(b *testing.B, events, convs int, shape benchShape) *benchFixture {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	name := "events-" + strconv.Itoa(events)
	if shape.name != benchShapeBench.name {
		name += "-" + shape.name
	}
	if f, ok := fixtures[name]; ok {
		return f
	}
	f := &benchFixture{events: events, convs: convs}
	if keep := os.Getenv(benchDirEnv); keep != "" {
		f.dir, f.keep = filepath.Join(keep, name), true
		if _, err := os.Stat(filepath.Join(f.dir, "complete")); err == nil {
			fixtures[name] = f
			return f
		}
		if err := os.RemoveAll(f.dir); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			b.Fatal(err)
		}
	} else {
		dir, err := os.MkdirTemp("", "conv-bench-")
		if err != nil {
			b.Fatal(err)
		}
		f.dir = dir
	}
	fixtures[name] = f
	buildLog(b, filepath.Join(f.dir, "log"), events, convs, shape)
	// The timed part measures a rebuild from a log at rest.
	eventlogtest.Settle(b, filepath.Join(f.dir, "log"))
	if err := os.WriteFile(filepath.Join(f.dir, "complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return f
}

// buildLog appends the fixture's events to a new log in dir.
func buildLog(b *testing.B, dir string, events, convs int, shape benchShape) {
	l, err := eventlog.Open(dir, eventlog.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	per := events / convs
	const active = 100
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for first := 0; first < convs; first += active {
		for i := range per {
			parts := make([]eventlog.StreamAppend, 0, active)
			for c := first; c < min(first+active, convs); c++ {
				key := fmt.Sprintf("p%d/c%d", c%10, c)
				typ, data := conversation.Started, fmt.Sprintf(shape.started, c%10, c)
				if i > 0 {
					step := shape.turn[(i-1)%len(shape.turn)]
					typ, data = step.typ, step.data
					if data[2:9] == "call_id" {
						data = fmt.Sprintf(`{"call_id":"k%d"`, (i-1)/len(shape.turn)) + data[len(`{"call_id":"CALL"`):]
					}
				}
				s := bus.Signal{}
				s.SetSpecVersion(bus.SpecVersion)
				s.SetType(typ)
				s.SetID(fmt.Sprintf("e%d", i))
				s.SetSource("/bench")
				s.SetTime(t0.Add(time.Duration(i) * time.Second))
				s.SetExtension(bus.ExtCausationID, fmt.Sprintf("e%d", max(i-1, 0)))
				s.SetData("application/json", []byte(data))
				parts = append(parts, eventlog.StreamAppend{Stream: conversation.Stream(key), Events: []bus.Signal{s}})
			}
			if _, err := l.AppendMulti(context.Background(), parts); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRebuild folds a whole log into the four read models from an
// empty projection store: one op is one full rebuild. The 1,000,000-event
// log (10,000 conversations) is built once per process, which takes a
// while; run it with -bench 'Rebuild/events=1000000' -benchtime 1x. The
// shape=assistant runs fold events written as the assistant writes them
// (assistantTurn).
func BenchmarkRebuild(b *testing.B) {
	for _, size := range []struct {
		events, convs int
		shape         benchShape
	}{
		{100_000, 1_000, benchShapeBench}, {1_000_000, 10_000, benchShapeBench},
		{100_000, 1_000, benchShapeAssistant}, {1_000_000, 10_000, benchShapeAssistant},
	} {
		name := fmt.Sprintf("events=%d/conversations=%d", size.events, size.convs)
		if size.shape.name != benchShapeBench.name {
			name += "/shape=" + size.shape.name
		}
		b.Run(name, func(b *testing.B) {
			f := fixture(b, size.events, size.convs, size.shape)
			l, err := eventlog.Open(filepath.Join(f.dir, "log"), eventlog.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ReportAllocs()
			b.ResetTimer()
			var elapsed time.Duration
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				s, err := projections.OpenStore(dir, projections.StoreOptions{})
				if err != nil {
					b.Fatal(err)
				}
				r, err := projections.NewRunner(l, s, projections.Options{}, Projections(Options{})...)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				if err := r.CatchUp(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				b.StopTimer()
				if st := r.Status(); st[0].Applied != uint64(f.events) || st[2].Keys != uint64(f.convs) {
					b.Fatalf("status after rebuild: %+v", st)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(f.events*b.N)/elapsed.Seconds(), "events/s")
		})
	}
}

// foldedBenchConversation folds one conversation of the fixture's shape,
// its 100 events, into the four read models, without a log.
func foldedBenchConversation(b *testing.B, shape benchShape) (*Timeline, *LLMContext, *Status, *Diagnostics, []*projections.Entry) {
	return foldedBenchEvents(b, shape, 100)
}

// foldedBenchEvents is foldedBenchConversation of n events.
func foldedBenchEvents(b *testing.B, shape benchShape, n int) (*Timeline, *LLMContext, *Status, *Diagnostics, []*projections.Entry) {
	var entries []*projections.Entry
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		typ, data := conversation.Started, fmt.Sprintf(shape.started, 1, 1)
		if i > 0 {
			step := shape.turn[(i-1)%len(shape.turn)]
			typ, data = step.typ, step.data
			if data[2:9] == "call_id" {
				data = fmt.Sprintf(`{"call_id":"k%d"`, (i-1)/len(shape.turn)) + data[len(`{"call_id":"CALL"`):]
			}
		}
		s := bus.Signal{}
		s.SetSpecVersion(bus.SpecVersion)
		s.SetType(typ)
		s.SetID(fmt.Sprintf("e%d", i))
		s.SetSource("/bench")
		s.SetTime(t0.Add(time.Duration(i) * time.Second))
		s.SetExtension(bus.ExtCausationID, fmt.Sprintf("e%d", max(i-1, 0)))
		s.SetData("application/json", []byte(data))
		entries = append(entries, projections.NewEntry(eventlog.Entry{Stream: conversation.Stream("p1/c1"), Seq: uint64(i + 1), GlobalSeq: uint64(i + 1), Event: s}))
	}
	tl, lc, st, dg := TimelineProjection{}.Init(), LLMContextProjection{}.Init(), StatusProjection{}.Init(), DiagnosticsProjection{}.Init()
	for _, e := range entries {
		tl = TimelineProjection{}.Apply(tl, e)
		lc = LLMContextProjection{}.Apply(lc, e)
		st = StatusProjection{}.Apply(st, e)
		dg = DiagnosticsProjection{}.Apply(dg, e)
	}
	return tl, lc, st, dg, entries
}

// BenchmarkEncodeStates encodes the timeline and llm_context of a
// 100-event conversation as a checkpoint does (AppendJSON into a reused
// buffer).
func BenchmarkEncodeStates(b *testing.B) {
	for _, shape := range []benchShape{benchShapeBench, benchShapeAssistant} {
		b.Run("shape="+shape.name, func(b *testing.B) {
			tl, lc, _, _, _ := foldedBenchConversation(b, shape)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				var ok1, ok2 bool
				buf, ok1 = tl.AppendJSON(buf[:0])
				buf, ok2 = lc.AppendJSON(buf)
				if !ok1 || !ok2 {
					b.Fatal("AppendJSON declined")
				}
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkDecodeEvents decodes the events of a 100-event conversation as
// a runner does, into an Event it reuses; per op, one event.
func BenchmarkDecodeEvents(b *testing.B) {
	for _, shape := range []benchShape{benchShapeBench, benchShapeAssistant} {
		b.Run("shape="+shape.name, func(b *testing.B) {
			_, _, _, _, entries := foldedBenchConversation(b, shape)
			ev := new(Event)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				decodeInto(ev, &entries[i%len(entries)].Entry, true)
				i++
			}
		})
	}
}

// BenchmarkFoldConversation folds a conversation of the assistant's shape
// into the four read models, its events decoded beforehand; per op, one
// event. With 2,000 events it shows what each event costs in a long
// conversation: a fold that searches the whole state per event grows
// with it.
func BenchmarkFoldConversation(b *testing.B) {
	for _, n := range []int{100, 2000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			_, _, _, _, entries := foldedBenchEvents(b, benchShapeAssistant, n)
			for _, e := range entries {
				decoded.Of(e)
			}
			b.ReportAllocs()
			var (
				tl *Timeline
				lc *LLMContext
				st *Status
				dg *Diagnostics
			)
			i := 0
			for b.Loop() {
				if i%n == 0 {
					tl, lc, st, dg = TimelineProjection{}.Init(), LLMContextProjection{}.Init(), StatusProjection{}.Init(), DiagnosticsProjection{}.Init()
				}
				e := entries[i%n]
				tl = TimelineProjection{}.Apply(tl, e)
				lc = LLMContextProjection{}.Apply(lc, e)
				st = StatusProjection{}.Apply(st, e)
				dg = DiagnosticsProjection{}.Apply(dg, e)
				i++
			}
		})
	}
}

package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// custom is a Go-registered tool taking {"n": integer}.
func custom(name string, fn Func) Tool {
	return Tool{Name: name, Description: "a test tool",
		InputSchema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
		Func:        fn}
}

func TestRunnerRefusals(t *testing.T) {
	var ran atomic.Int32
	run := func(ctx context.Context, c *Call) (any, error) { ran.Add(1); return "ran", nil }
	p := policy.Default()
	p.Tools = map[string]policy.Mode{"*": policy.ModeAllow, "asker": policy.ModeAsk, "nope": policy.ModeDeny}
	f := newFixture(t, nil, p, Options{}, custom("asker", run), custom("nope", run), custom("fine", run))

	f.fail(t, "no_such_tool", map[string]any{}, ReasonUnknownTool)
	e := f.fail(t, "fine", map[string]any{"n": "seven"}, ReasonInvalidArgs)
	if !strings.Contains(e.Message, "/n") || e.Details == nil {
		t.Fatalf("invalid_args does not name the field or lacks details: %+v", e)
	}
	f.fail(t, "fine", map[string]any{"m": 1}, ReasonInvalidArgs)
	if _, err := f.runner.Run(context.Background(), ToolCall{Name: "fine", Args: json.RawMessage(`{"n":`)}); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("broken JSON args: %v", err)
	}
	f.fail(t, "nope", map[string]any{}, ReasonDenied)
	f.fail(t, "asker", map[string]any{}, ReasonApprovalRequired)
	if ran.Load() != 0 {
		t.Fatalf("a refused tool ran %d times", ran.Load())
	}
	res, err := f.runner.Run(context.Background(), ToolCall{ID: "c1", Name: "fine"})
	if err != nil || string(res.Data) != `"ran"` || res.CallID != "c1" {
		t.Fatalf("fine with no args: %+v %v", res, err)
	}
	want := []string{"started no_such_tool", "failed no_such_tool", "started fine", "failed fine", "started fine", "failed fine",
		"started fine", "failed fine", "started nope", "failed nope", "started asker", "failed asker", "started fine", "completed fine"}
	if got := f.obs.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("observer saw\n%v\nwant\n%v", got, want)
	}
}

func TestCatalogListFiltersByPolicy(t *testing.T) {
	p := policy.Default()
	p.Tools = map[string]policy.Mode{"*": policy.ModeAllow, "write_file": policy.ModeDeny, "edit_file": policy.ModeAsk}
	f := newFixture(t, nil, p, Options{})
	var names []string
	for _, s := range f.runner.Catalog().List(p) {
		names = append(names, s.Name)
		var schema map[string]any
		if err := json.Unmarshal(s.InputSchema, &schema); err != nil || schema["type"] != "object" || s.Description == "" {
			t.Fatalf("%s: spec not usable by an LLM API: %v %v", s.Name, schema, err)
		}
	}
	if want := []string{"edit_file", "glob", "grep", "list_dir", "read_file"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	b, _ := json.Marshal(f.runner.Catalog().List(p)[0])
	if !strings.HasPrefix(string(b), `{"name":"edit_file","api_name":"edit_file","description":`) || !strings.Contains(string(b), `"input_schema":{`) {
		t.Fatalf("spec JSON: %s", b)
	}
}

func TestNewCatalogRefuses(t *testing.T) {
	fn := func(context.Context, *Call) (any, error) { return nil, nil }
	for name, tools := range map[string][]Tool{
		"duplicate":  {custom("a", fn), custom("a", fn)},
		"bad name":   {custom("a b", fn)},
		"no func":    {custom("a", nil)},
		"bad schema": {{Name: "a", Func: fn, InputSchema: []byte(`{"type":"nonsense"}`)}},
		"remote ref": {{Name: "a", Func: fn, InputSchema: []byte(`{"$ref":"file:///etc/passwd"}`)}},
	} {
		if _, err := NewCatalog(tools...); err == nil {
			t.Errorf("%s: NewCatalog accepted it", name)
		}
	}
}

func TestRunnerTimeout(t *testing.T) {
	hang := custom("hang", func(ctx context.Context, c *Call) (any, error) {
		<-ctx.Done() // hangs until cancelled
		return nil, ctx.Err()
	})
	hang.Timeout = 20 * time.Millisecond
	f := newFixture(t, nil, nil, Options{}, hang)
	e := f.fail(t, "hang", map[string]any{}, ReasonTimeout)
	if !strings.Contains(e.Message, "20ms") {
		t.Fatalf("timeout message does not say the timeout: %s", e.Message)
	}
	// A tool that ignores its context: the runner still returns timeout,
	// and the tool keeps its slot until it really returns.
	release := make(chan struct{})
	stuck := custom("stuck", func(ctx context.Context, c *Call) (any, error) { <-release; return "late", nil })
	stuck.Timeout = 20 * time.Millisecond
	g := newFixture(t, nil, nil, Options{MaxConcurrent: 1}, stuck)
	g.fail(t, "stuck", map[string]any{}, ReasonTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.runner.Run(ctx, ToolCall{Name: "stuck"}); err == nil || !strings.Contains(err.Error(), ReasonBusy) {
		t.Fatalf("second call while the timed-out tool still runs: %v, want busy", err)
	}
	close(release)
	g.runner.slots <- struct{}{} // the slot comes back once the tool returns
	<-g.runner.slots
}

func TestRunnerCancelled(t *testing.T) {
	started := make(chan struct{})
	f := newFixture(t, nil, nil, Options{}, custom("wait", func(ctx context.Context, c *Call) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := f.runner.Run(ctx, ToolCall{Name: "wait"}); err == nil || !strings.Contains(err.Error(), ReasonCancelled) {
		t.Fatalf("caller cancelled: %v", err)
	}
}

func TestRunnerConcurrencyLimit(t *testing.T) {
	var running, peak atomic.Int32
	gate := make(chan struct{})
	entered := make(chan struct{}, 10)
	f := newFixture(t, nil, nil, Options{MaxConcurrent: 2}, custom("slow", func(ctx context.Context, c *Call) (any, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		entered <- struct{}{}
		<-gate
		running.Add(-1)
		return nil, nil
	}))
	done := make(chan error, 4)
	for range 4 {
		go func() { _, err := f.runner.Run(context.Background(), ToolCall{Name: "slow"}); done <- err }()
	}
	<-entered
	<-entered
	// Both slots are held: a call with a short deadline gets busy.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := f.runner.Run(ctx, ToolCall{Name: "slow"}); err == nil || !strings.Contains(err.Error(), ReasonBusy) {
		t.Fatalf("a call past the limit: %v, want busy", err)
	}
	close(gate)
	for range 4 {
		if err := <-done; err != nil {
			t.Fatalf("a waiting call failed: %v", err)
		}
	}
	if peak.Load() != 2 {
		t.Fatalf("peak concurrency %d, want 2", peak.Load())
	}
}

func TestRunnerOutputCapStoresArtifact(t *testing.T) {
	store := views.Artifacts{Dir: t.TempDir()}
	big := strings.Repeat("y", 5000)
	f := newFixture(t, map[string]string{"big.txt": big}, nil, Options{OutputCap: 1024, Artifacts: store})
	res, err := f.call(t, "read_file", map[string]any{"path": "big.txt"})
	if err != nil || len(res.Artifacts) != 1 {
		t.Fatalf("big output: %+v %v", res, err)
	}
	if len(res.Data) > 1024 {
		t.Fatalf("data is %d bytes, over the cap", len(res.Data))
	}
	var stand artifactStandIn
	if err := json.Unmarshal(res.Data, &stand); err != nil || stand.Artifact != res.Artifacts[0].ID {
		t.Fatalf("stand-in %s: %v", res.Data, err)
	}
	stored, err := store.Get(stand.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	var out readFileOutput
	if err := json.Unmarshal(stored, &out); err != nil || out.Content != big {
		t.Fatalf("artifact holds %.80s…: %v", stored, err)
	}
	ev := f.obs.last[len(f.obs.last)-1]
	if len(ev.Artifacts) != 1 || ev.Artifacts[0].ID != stand.Artifact {
		t.Fatalf("completed event lacks the artifact: %+v", ev)
	}
	// Without a store, the output is refused, not truncated silently.
	g := newFixture(t, map[string]string{"big.txt": big}, nil, Options{OutputCap: 1024})
	g.fail(t, "read_file", map[string]any{"path": "big.txt"}, "too_large")
}

func TestRunnerToolPanicsAndPlainErrors(t *testing.T) {
	f := newFixture(t, nil, nil, Options{},
		custom("boom", func(context.Context, *Call) (any, error) { panic("kaboom") }),
		custom("plain", func(context.Context, *Call) (any, error) { return nil, context.Canceled }),
		custom("logs", func(ctx context.Context, c *Call) (any, error) { c.Logf("hello %d", 1); return 1, nil }))
	if e := f.fail(t, "boom", map[string]any{}, "internal"); !strings.Contains(e.Message, "kaboom") {
		t.Fatalf("panic message: %s", e.Message)
	}
	f.fail(t, "plain", map[string]any{}, ReasonToolFailed)
	res, _ := f.call(t, "logs", map[string]any{})
	if !reflect.DeepEqual(res.Logs, []string{"hello 1"}) {
		t.Fatalf("logs: %v", res.Logs)
	}
	var last Event
	for _, e := range f.obs.last {
		if e.Tool == "logs" {
			last = e
		}
	}
	if last.Duration <= 0 || last.Size != 1 {
		t.Fatalf("completed event: %+v", last)
	}
}

// TestInlineToolKeepsTheContract: a tool that honours its context runs on
// the caller's goroutine, with the same outcomes as through the watchdog:
// its deadline ends it as timeout, a panic is internal, the slot is freed.
func TestInlineToolKeepsTheContract(t *testing.T) {
	waits := Tool{Name: "waits", Description: "d", InputSchema: []byte(`{"type":"object"}`), HonoursContext: true, Timeout: 50 * time.Millisecond,
		Func: func(ctx context.Context, c *Call) (any, error) { <-ctx.Done(); return nil, ctx.Err() }}
	panics := Tool{Name: "panics", Description: "d", InputSchema: []byte(`{"type":"object"}`), HonoursContext: true,
		Func: func(ctx context.Context, c *Call) (any, error) { panic("boom") }}
	f := newFixture(t, nil, nil, Options{MaxConcurrent: 1}, waits, panics)
	f.fail(t, "waits", map[string]any{}, ReasonTimeout)
	if e := f.fail(t, "panics", map[string]any{}, "internal"); !strings.Contains(e.Message, "boom") {
		t.Errorf("panic message %q", e.Message)
	}
	f.fail(t, "panics", map[string]any{}, "internal") // the only slot was given back
}

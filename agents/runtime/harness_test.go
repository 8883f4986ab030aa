package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// Test directives with executors the tests control.
type (
	// block waits on the harness's gate before it completes.
	block struct {
		Name string `json:"name"`
	}
	// boom panics in its executor.
	boom struct{}
)

func (block) DirectiveKind() string { return "test_block" }
func (boom) DirectiveKind() string  { return "test_boom" }

// probe is an agent type with one action per directive, so tests can make
// an agent do anything by sending it a signal.
func probeDefinition(t testing.TB) *agents.Definition {
	t.Helper()
	type params struct {
		Tag    string         `json:"tag"`
		Mode   string         `json:"mode"`
		MS     int            `json:"ms"`
		Job    string         `json:"job"`
		Expr   string         `json:"expr"`
		N      float64        `json:"n"`
		Name   string         `json:"name"`
		Reason string         `json:"reason"`
		Opts   map[string]any `json:"opts"`
	}
	appendTo := func(env agents.Env, key string, v any) agents.Result {
		list := append(append([]any{}, env.State.List(key)...), v)
		return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{key: list}}}}
	}
	act := func(name string, run func(env agents.Env, p params) (agents.Result, error)) agents.Action {
		return agents.Action{Name: name, Run: agents.Typed(run)}
	}
	actions := []agents.Action{
		act("emit", func(env agents.Env, p params) (agents.Result, error) {
			e, err := agents.NewEmit("probe.emitted", map[string]any{"n": p.N})
			r := agents.Result{Directives: []agents.Directive{e}, Ops: []agents.StateOp{agents.Set{Values: map[string]any{"emitted": env.State.Number("emitted") + 1}}}}
			return r, err
		}),
		act("spawn", func(env agents.Env, p params) (agents.Result, error) {
			opts := p.Opts
			if p.Mode != "" {
				opts = map[string]any{"on_parent_death": p.Mode}
			}
			return agents.Result{Directives: []agents.Directive{agents.SpawnAgent{Type: "probe", Tag: p.Tag, Opts: opts}}}, nil
		}),
		act("stop_child", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.StopChild{Tag: p.Tag, Reason: p.Reason}}}, nil
		}),
		act("schedule", func(env agents.Env, p params) (agents.Result, error) {
			sig, err := agents.NewSignal("probe.tick", map[string]any{"from": "schedule"})
			return agents.Result{Directives: []agents.Directive{agents.Schedule{Delay: time.Duration(p.MS) * time.Millisecond, Signal: sig}}}, err
		}),
		// remind schedules a plain message, which arrives as
		// jido.scheduled; "reminded" notes the messages that arrived.
		act("remind", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.Schedule{Delay: time.Duration(p.MS) * time.Millisecond, Message: map[string]any{"note": p.Name}}}}, nil
		}),
		{Name: "reminded", Run: func(env agents.Env, raw json.RawMessage) (agents.Result, error) {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				return agents.Result{}, err
			}
			return appendTo(env, "reminders", v["message"]), nil
		}},
		act("schedule_cancel", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.ScheduleCancel{SignalID: p.Name}}}, nil
		}),
		act("cron", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.Cron{JobID: p.Job, Expr: p.Expr}}}, nil
		}),
		act("cron_cancel", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.CronCancel{JobID: p.Job}}}, nil
		}),
		act("tick", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{"ticks": env.State.Number("ticks") + 1}}}}, nil
		}),
		act("fail", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{}, bus.Errorf("probe_failed", "asked to fail (%s)", p.Reason)
		}),
		act("stop", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.Stop{Reason: p.Reason}}}, nil
		}),
		act("block", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{block{Name: p.Name}}}, nil
		}),
		// block_emit blocks, then emits probe.emitted: two directives of
		// one decision.
		act("block_emit", func(env agents.Env, p params) (agents.Result, error) {
			e, err := agents.NewEmit("probe.emitted", map[string]any{"n": p.N})
			return agents.Result{Directives: []agents.Directive{block{Name: p.Name}, e}}, err
		}),
		act("boom", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{boom{}}}, nil
		}),
		act("run", func(env agents.Env, p params) (agents.Result, error) {
			in, err := agents.NewInstruction("double", map[string]any{"n": p.N})
			return agents.Result{Directives: []agents.Directive{agents.RunInstruction{Instruction: in, ResultAction: "got_result"}}}, err
		}),
		// hold runs the task "hold" (which tests register) named p.Name;
		// its result joins the list "held".
		act("hold", func(env agents.Env, p params) (agents.Result, error) {
			in, err := agents.NewInstruction("hold", map[string]any{"name": p.Name})
			return agents.Result{Directives: []agents.Directive{agents.RunInstruction{Instruction: in, ResultAction: "held"}}}, err
		}),
		{Name: "held", Run: func(env agents.Env, raw json.RawMessage) (agents.Result, error) {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				return agents.Result{}, err
			}
			return appendTo(env, "held", v["result"]), nil
		}},
		{Name: "got_result", Run: func(env agents.Env, raw json.RawMessage) (agents.Result, error) {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				return agents.Result{}, err
			}
			return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{"result": v["result"], "result_error": v["error"]}}}}, nil
		}},
		act("complete", func(env agents.Env, p params) (agents.Result, error) {
			return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{"status": "completed"}}}}, nil
		}),
		act("lifecycle", func(env agents.Env, p params) (agents.Result, error) {
			return appendTo(env, "lifecycle", env.Origin.Type), nil
		}),
	}
	var routes []agents.Route
	for _, a := range actions {
		routes = append(routes, agents.Route{Pattern: "probe." + a.Name, Action: a.Name})
	}
	routes = append(routes,
		agents.Route{Pattern: TypeChildStarted, Action: "lifecycle"},
		agents.Route{Pattern: TypeChildExit, Action: "lifecycle"},
		agents.Route{Pattern: TypeOrphaned, Action: "lifecycle"},
		agents.Route{Pattern: TypeCronTick, Action: "tick"},
		agents.Route{Pattern: agents.TypeScheduled, Action: "reminded"},
	)
	def, err := agents.Define(agents.Spec{Name: "probe", Schema: `{"type":"object"}`, Actions: actions, Routes: routes})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// harness is a runtime on a real log in a temporary directory.
type harness struct {
	t     testing.TB
	dir   string
	log   *eventlog.Log
	rt    *Runtime
	cfg   Config
	gates sync.Map // block name → chan struct{}

	mu      sync.Mutex
	emitted []bus.Signal
}

func newHarness(t testing.TB, adjust ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir()}
	h.openLog()
	reg := agents.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(probeDefinition(t)); err != nil {
		t.Fatal(err)
	}
	codec := agents.NewDirectiveCodec()
	for _, err := range []error{agents.RegisterDirective[block](codec), agents.RegisterDirective[boom](codec)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	h.cfg = Config{
		Types:      reg,
		Directives: codec,
		Executors: map[string]DirectiveExec{
			"test_block": ExecFunc(func(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
				select {
				case <-h.gate(d.(block).Name):
				case <-ctx.Done():
				}
				return ExecResult{}, nil
			}),
			"test_boom": ExecFunc(func(context.Context, agents.Directive, *ExecContext) (ExecResult, error) {
				panic("boom")
			}),
		},
		Tasks: map[string]Task{
			"double": func(_ context.Context, in agents.Instruction) (json.RawMessage, error) {
				var p struct{ N float64 }
				if err := json.Unmarshal(in.Params, &p); err != nil {
					return nil, err
				}
				return json.Marshal(p.N * 2)
			},
		},
		OnEmit: func(_ string, s *bus.Signal) {
			h.mu.Lock()
			h.emitted = append(h.emitted, s.Clone())
			h.mu.Unlock()
		},
		RestartWindow: time.Hour,
	}
	for _, f := range adjust {
		f(&h.cfg)
	}
	h.startRuntime()
	return h
}

func (h *harness) openLog() {
	l, err := eventlog.Open(h.dir, eventlog.Options{NoSync: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.log = l
	h.t.Cleanup(func() { _ = l.Close() })
}

func (h *harness) startRuntime() {
	cfg := h.cfg
	cfg.Store = h.log
	rt, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.rt = rt
	h.t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
}

// restart closes the runtime and the log, reopens both and recovers, as a
// process restart would.
func (h *harness) restart() int {
	h.t.Helper()
	n, err := h.restartRecovering()
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// restartRecovering is restart returning recovery's error to the test.
func (h *harness) restartRecovering() (int, error) {
	h.t.Helper()
	h.openGates()
	if err := h.rt.Shutdown(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	if err := h.log.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.openLog()
	h.startRuntime()
	return h.rt.Recover(context.Background())
}

func (h *harness) gate(name string) chan struct{} {
	ch, _ := h.gates.LoadOrStore(name, make(chan struct{}))
	return ch.(chan struct{})
}

func (h *harness) open(name string) { close(h.gate(name)) }

func (h *harness) openGates() {
	h.gates.Range(func(k, v any) bool {
		select {
		case <-v.(chan struct{}):
		default:
			close(v.(chan struct{}))
		}
		return true
	})
}

func (h *harness) start(typ, id string, opts Options) Info {
	h.t.Helper()
	info, err := h.rt.Start(context.Background(), StartRequest{Type: typ, ID: id, Options: opts})
	if err != nil {
		h.t.Fatalf("start %s %s: %v", typ, id, err)
	}
	return info
}

// signal builds a signal with a fresh id.
func signal(t testing.TB, typ string, data any) bus.Signal {
	t.Helper()
	s, err := bus.NewSignal(typ, "test", data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (h *harness) call(id, typ string, data any) (Reply, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.rt.Call(ctx, id, signal(h.t, typ, data))
}

func (h *harness) mustCall(id, typ string, data any) Reply {
	h.t.Helper()
	r, err := h.call(id, typ, data)
	if err != nil {
		h.t.Fatalf("call %s %s: %v", id, typ, err)
	}
	return r
}

func stateOf(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return m
}

func (h *harness) state(id string) map[string]any {
	h.t.Helper()
	info, err := h.rt.State(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return stateOf(h.t, info.State)
}

// settle waits until agent id has nothing queued and neither loop runs:
// every directive its decisions queued (or recovery queued again) has
// run, and what they emitted was emitted. A passive or stopped agent has
// nothing to run.
func (h *harness) settle(id string) {
	h.t.Helper()
	testkit.Eventually(h.t, "agent "+id+" settled", func() bool {
		h.rt.mu.RLock()
		s := h.rt.agents[id]
		h.rt.mu.RUnlock()
		if s == nil {
			return true
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.inbox) == 0 && len(s.queue) == 0 && !s.inboxRunning && !s.queueRunning
	})
}

func (h *harness) emittedOf(typ string) []bus.Signal {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []bus.Signal
	for _, s := range h.emitted {
		if s.Type() == typ {
			out = append(out, s)
		}
	}
	return out
}

// entries returns the types of a stream's entries.
func (h *harness) entries(stream string) []string {
	h.t.Helper()
	var out []string
	for e, err := range h.log.ReadStream(stream, eventlog.ReadOptions{}) {
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, e.Event.Type())
	}
	return out
}

// outcomes returns the recorded outcome of each directive of stream, by
// "version/index", whether an effects record or a later cmd record
// carries it.
func (h *harness) outcomes(stream string) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	note := func(rs []effectResult) {
		for _, r := range rs {
			out[fmt.Sprintf("%d/%d", r.Version, r.Index)] = r.Outcome
		}
	}
	for e, err := range h.log.ReadStream(stream, eventlog.ReadOptions{}) {
		if err != nil {
			h.t.Fatal(err)
		}
		switch e.Event.Type() {
		case TypeCmd:
			var cr cmdRecord
			if err := json.Unmarshal(e.Event.Data(), &cr); err != nil {
				h.t.Fatal(err)
			}
			note(cr.Effects)
		case TypeEffects:
			var er effectsRecord
			if err := json.Unmarshal(e.Event.Data(), &er); err != nil {
				h.t.Fatal(err)
			}
			note(er.Results)
		}
	}
	return out
}

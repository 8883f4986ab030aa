package agents_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/*.golden from the current output")

// TestGoldenDirectives pins the log form of the directives (and the state)
// that the counter, the calculator and an agent emitting every kind of
// signal-carrying directive produce. The log stores these bytes, so a
// change here is a change of the log format, never a side effect of making
// Cmd faster: the file was written before Cmd's hot path was optimised.
// Regenerate with -update-golden only for an intended format change.
func TestGoldenDirectives(t *testing.T) {
	var out bytes.Buffer
	codec := agents.NewDirectiveCodec()
	record := func(name string, a agents.Agent, dirs []agents.Directive) {
		t.Helper()
		fmt.Fprintf(&out, "## %s\nstate: %s\n", name, stateJSON(t, a.State))
		// One directive a line, so a diff points at the one that moved.
		for i, d := range dirs {
			b, err := codec.Encode(d)
			if err != nil {
				t.Fatalf("%s: Encode: %v", name, err)
			}
			fmt.Fprintf(&out, "%d: %s\n", i, b)
		}
		out.WriteByte('\n')
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)

	// The counter, by Cmd (the benchmark's instruction) and by Step.
	for _, validate := range []bool{false, true} {
		spec := builtin.CounterSpec()
		if !validate {
			for i := range spec.Actions {
				spec.Actions[i].Params = ""
			}
		}
		def := agents.MustDefine(spec)
		a, err := def.New("c", nil)
		if err != nil {
			t.Fatal(err)
		}
		tag := fmt.Sprintf("counter validate=%v", validate)
		origin := agents.Origin{ID: "01J0000000000000000000000", Time: time.Unix(1700000000, 0)}
		for _, in := range []agents.Instruction{
			{Action: "increment", Params: json.RawMessage(`{"by":2}`), Origin: origin},
			{Action: "increment", Origin: origin},
			{Action: "decrement", Params: json.RawMessage(`{"by":-7}`), Origin: agents.Origin{ID: " padded ", Source: "x", CorrelationID: "conv-1"}},
			{Action: "increment", Params: json.RawMessage(`{"By":3}`)},
			{Action: "increment", Params: json.RawMessage(`{"by":2.5}`), Origin: origin},
			{Action: "increment", Params: json.RawMessage(`{"by":1,"extra":true}`), Origin: origin},
			{Action: "increment", Params: json.RawMessage(`{"by":null}`), Origin: origin},
			{Action: "increment", Params: json.RawMessage(`{"by":9007199254740993}`), Origin: origin},
			{Action: "increment", Params: json.RawMessage(`[1]`), Origin: origin},
			{Action: "reset", Origin: origin},
			{Action: "nope", Origin: origin},
		} {
			var dirs []agents.Directive
			a, dirs = agents.Cmd(a, in)
			record(fmt.Sprintf("%s cmd %s %s origin=%q", tag, in.Action, in.Params, in.Origin.ID), a, dirs)
		}
		var dirs []agents.Directive
		a, dirs = agents.Cmd(a,
			agents.Instruction{Action: "increment", Params: json.RawMessage(`{"by":1}`), Origin: origin},
			agents.Instruction{Action: "decrement", Params: json.RawMessage(`{"by":"x"}`), Origin: origin},
			agents.Instruction{Action: "increment", Params: json.RawMessage(`{"by":40}`), Origin: origin},
		)
		record(tag+" cmd three instructions", a, dirs)
		for _, s := range []struct {
			typ, id, corr, data string
			at                  time.Time
		}{
			{builtin.CounterIncrement, "s1", "", `{"by":2}`, t0},
			{builtin.CounterIncrement, "s2", "conv-9", ``, t0},
			{builtin.CounterDecrement, "s3", "", `{"by":5}`, time.Time{}},
			{builtin.CounterReset, "s4", "conv-9", `null`, t0},
			{"counter.multiply", "s5", "", `{"by":2}`, t0},
		} {
			sig := goldenSignal(t, s.typ, s.id, s.corr, s.data, s.at)
			a, dirs = agents.Step(a, sig)
			record(fmt.Sprintf("%s step %s %s %s", tag, s.typ, s.id, s.data), a, dirs)
		}
	}

	// The calculator: skills, a Then chain into stats, errors.
	calc, err := builtin.NewCalculator()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := calc.New("team-1/calc_2", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ typ, id, data string }{
		{"calculator.add", "k1", `{"a":1.5,"b":2}`},
		{"calculator.divide", "k2", `{"a":1,"b":3}`},
		{"calculator.divide", "k3", `{"a":1,"b":0}`},
		{"calculator.multiply", "k4", `{"a":1e300,"b":1e300}`},
		{"calculator.subtract", "k5", `{"a":"x","b":1}`},
		{"stats.record", "k6", `{"value":-4}`},
		{"stats.reset", "k7", ``},
	} {
		var dirs []agents.Directive
		ca, dirs = agents.Step(ca, goldenSignal(t, s.typ, s.id, "conv-c", s.data, t0))
		record(fmt.Sprintf("calculator step %s %s %s", s.typ, s.id, s.data), ca, dirs)
	}

	// An agent whose actions return each signal-carrying directive, with
	// signals that leave everything to Cmd and signals that bring their own.
	em := emitterAgent(t)
	for _, agentID := range []string{"e1", "team-1/worker_2"} {
		ea, err := em.New(agentID, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, origin := range []agents.Origin{
			{ID: "o1", Time: t0, CorrelationID: "conv-e"},
			{},
		} {
			for _, name := range emitterCases {
				var dirs []agents.Directive
				ea, dirs = agents.Cmd(ea, agents.Instruction{Action: name, Origin: origin})
				record(fmt.Sprintf("emitter %s %s origin=%q", agentID, name, origin.ID), ea, dirs)
			}
		}
	}

	path := filepath.Join("testdata", "golden", "directives.golden")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to create it)", err)
	}
	if got := out.Bytes(); !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s:%d differs\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}

func goldenSignal(t *testing.T, typ, id, corr, data string, at time.Time) bus.Signal {
	t.Helper()
	sig := bus.Signal{}
	sig.SetSpecVersion(bus.SpecVersion)
	sig.SetType(typ)
	sig.SetID(id)
	sig.SetSource("golden")
	sig.SetTime(at)
	if corr != "" {
		sig.SetExtension(bus.ExtCorrelationID, corr)
	}
	if data != "" {
		if err := bus.SetJSONData(&sig, json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
	}
	return sig
}

var emitterCases = []string{
	"plain", "nodata", "own", "timed", "twice", "extensions", "subject", "dispatch",
	"schedule", "cron", "run", "badsource", "badtype", "empty", "mixed",
}

// emitterAgent has one action per case in emitterCases, each returning
// directives built a different way.
func emitterAgent(t *testing.T) *agents.Definition {
	t.Helper()
	sig := func(typ string, data any) bus.Signal {
		s, err := agents.NewSignal(typ, data)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t1 := time.Date(2030, 6, 7, 8, 9, 10, 11, time.FixedZone("x", 3600))
	build := map[string]func(env agents.Env) []agents.Directive{
		"plain": func(agents.Env) []agents.Directive {
			return []agents.Directive{agents.Emit{Signal: sig("e.plain", map[string]any{"b": 1, "a": "x"})}}
		},
		"nodata": func(agents.Env) []agents.Directive {
			return []agents.Directive{agents.Emit{Signal: sig("e.nodata", nil)}}
		},
		"own": func(agents.Env) []agents.Directive {
			s := sig("e.own", json.RawMessage(`{"z":true}`))
			s.SetID("own-1")
			s.SetSource("urn:example:own")
			s.SetTime(t1)
			s.SetExtension(bus.ExtCausationID, "someone-else")
			s.SetExtension(bus.ExtCorrelationID, "own-conv")
			return []agents.Directive{agents.Emit{Signal: s}}
		},
		"timed": func(agents.Env) []agents.Directive {
			s := sig("e.timed", json.RawMessage(`[1,2]`))
			s.SetTime(t1)
			return []agents.Directive{agents.Emit{Signal: s}}
		},
		"twice": func(agents.Env) []agents.Directive {
			s := sig("e.twice", "same")
			return []agents.Directive{agents.Emit{Signal: s}, agents.Emit{Signal: s}}
		},
		"extensions": func(agents.Env) []agents.Directive {
			s := sig("e.ext", nil)
			s.SetExtension("count", 7)
			s.SetExtension("flag", true)
			s.SetExtension("when", t1)
			s.SetExtension(bus.ExtTraceParent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			return []agents.Directive{agents.Emit{Signal: s}}
		},
		"subject": func(agents.Env) []agents.Directive {
			s := sig("e.subject", nil)
			s.SetSubject("the/subject")
			s.SetDataSchema("https://example.com/schema.json")
			return []agents.Directive{agents.Emit{Signal: s}}
		},
		"dispatch": func(agents.Env) []agents.Directive {
			return []agents.Directive{
				agents.Emit{Signal: sig("e.dispatch", nil), Dispatch: &agents.Dispatch{Adapter: "nats", Target: "x.y", Options: map[string]string{"b": "2", "a": "1"}}},
				agents.Emit{Signal: sig("e.dispatch", nil), Dispatch: &agents.Dispatch{}},
			}
		},
		"schedule": func(agents.Env) []agents.Directive {
			return []agents.Directive{
				agents.Schedule{Delay: 1500 * time.Microsecond, Signal: sig("e.later", nil)},
				agents.Schedule{Delay: -time.Second, Signal: sig("e.never", nil)},
			}
		},
		"cron": func(agents.Env) []agents.Directive {
			s := sig("e.tick", map[string]int{"n": 1})
			return []agents.Directive{
				agents.Cron{JobID: "j1", Expr: "*/5 * * * *", Signal: &s, TZ: "Europe/Paris"},
				agents.Cron{JobID: "j2", Expr: "0 0 * * *"},
				agents.CronCancel{JobID: "j0"},
			}
		},
		"run": func(agents.Env) []agents.Directive {
			return []agents.Directive{
				agents.RunInstruction{Instruction: agents.Instruction{Action: "work", Params: json.RawMessage(`{"x":1}`)}, ResultAction: "done"},
				agents.SpawnAgent{Type: "counter", Tag: "kid", Opts: map[string]any{"n": 1}, Restart: agents.RestartTransient},
				agents.StopChild{Tag: "kid", Reason: "bye"},
				agents.Stop{Reason: "done"},
			}
		},
		"badsource": func(agents.Env) []agents.Directive {
			s := sig("e.bad", nil)
			s.SetSource("%zz")
			return []agents.Directive{agents.Emit{Signal: s}}
		},
		"badtype": func(agents.Env) []agents.Directive {
			return []agents.Directive{agents.Emit{Signal: sig("bad type!", nil)}}
		},
		"empty": func(agents.Env) []agents.Directive { return []agents.Directive{agents.Emit{}} },
		"mixed": func(env agents.Env) []agents.Directive {
			s := sig("e.mixed", map[string]string{"agent": env.AgentID})
			own := sig("e.mixed", nil)
			own.SetSource("/agent/elsewhere")
			return []agents.Directive{agents.Emit{Signal: s}, nil, agents.Emit{Signal: own}, agents.Emit{Signal: s}}
		},
	}
	var actions []agents.Action
	for _, name := range emitterCases {
		b := build[name]
		actions = append(actions, agents.Action{
			Name: name,
			Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
				return agents.Result{
					Ops:        []agents.StateOp{agents.SetPath{Path: []string{"n"}, Value: env.State.Number("n") + 1}},
					Directives: b(env),
				}, nil
			},
		})
	}
	return agents.MustDefine(agents.Spec{Name: "emitter", Actions: actions})
}

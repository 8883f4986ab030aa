package agents_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/schemas"
)

func testSignal(t testing.TB, typ, id string) bus.Signal {
	t.Helper()
	s, err := agents.NewSignal(typ, map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	s.SetID(id)
	s.SetSource("/agent/a")
	s.SetTime(time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC))
	s.SetExtension(bus.ExtCausationID, "cause")
	return s
}

// TestDirectiveLogForms checks each built-in directive: its log form (the
// exact bytes), that the form satisfies the directive's published schema,
// and that decoding it gives back an equal directive.
func TestDirectiveLogForms(t *testing.T) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	sig := testSignal(t, "user.created", "s1")
	sigJSON := `{"specversion":"1.0","id":"s1","source":"/agent/a","type":"user.created","datacontenttype":"application/json","time":"2025-01-02T03:04:05.0000006Z","data":{"n":1},"causationid":"cause"}`
	tests := []struct {
		d    agents.Directive
		want string
	}{
		{agents.Emit{Signal: sig}, `{"kind":"emit","signal":` + sigJSON + `}`},
		{agents.Emit{Signal: sig, Dispatch: &agents.Dispatch{Adapter: "nats", Target: "x.y", Options: map[string]string{"b": "2", "a": "1"}}},
			`{"kind":"emit","signal":` + sigJSON + `,"dispatch":{"adapter":"nats","target":"x.y","options":{"a":"1","b":"2"}}}`},
		{agents.Error{Err: bus.Errorf("no_route", "nothing for x"), Context: agents.ContextRouting},
			`{"kind":"error","error":{"type":"no_route","message":"nothing for x"},"context":"routing"}`},
		{agents.Error{Err: bus.Errorf("action_failed", "boom"), Context: agents.ContextAction, Action: "inc"},
			`{"kind":"error","error":{"type":"action_failed","message":"boom"},"context":"action","action":"inc"}`},
		{agents.SpawnAgent{Type: "counter", Tag: "w1"}, `{"kind":"spawn_agent","type":"counter","tag":"w1"}`},
		{agents.SpawnAgent{Type: "counter", Tag: "w1", Opts: map[string]any{"initial_state": map[string]any{"count": 2.0}}, Meta: map[string]any{"z": "1", "a": true}, Restart: agents.RestartTransient},
			`{"kind":"spawn_agent","type":"counter","tag":"w1","opts":{"initial_state":{"count":2}},"meta":{"a":true,"z":"1"},"restart":"transient"}`},
		{agents.StopChild{Tag: "w1", Reason: "done"}, `{"kind":"stop_child","tag":"w1","reason":"done"}`},
		{agents.Schedule{Delay: 1500 * time.Millisecond, Signal: sig}, `{"kind":"schedule","delay_ms":1500,"signal":` + sigJSON + `}`},
		{agents.Cron{JobID: "j", Expr: "*/5 * * * *", Signal: &sig, TZ: "Europe/Paris"},
			`{"kind":"cron","job_id":"j","expr":"*/5 * * * *","signal":` + sigJSON + `,"tz":"Europe/Paris"}`},
		{agents.Cron{JobID: "j", Expr: "0 0 * * *"}, `{"kind":"cron","job_id":"j","expr":"0 0 * * *"}`},
		{agents.CronCancel{JobID: "j"}, `{"kind":"cron_cancel","job_id":"j"}`},
		{agents.ScheduleCancel{SignalID: "s"}, `{"kind":"schedule_cancel","signal_id":"s"}`},
		{agents.RunInstruction{Instruction: agents.Instruction{Action: "fetch", Params: json.RawMessage(`{"url":"u"}`), Origin: agents.Origin{ID: "s1", Time: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}}, ResultAction: "fetched"},
			`{"kind":"run_instruction","instruction":{"action":"fetch","params":{"url":"u"},"origin":{"id":"s1","time":"2025-01-02T00:00:00Z"}},"result_action":"fetched"}`},
		{agents.Stop{Reason: "completed"}, `{"kind":"stop","reason":"completed"}`},
		{agents.Stop{}, `{"kind":"stop"}`},
	}
	codec := agents.NewDirectiveCodec()
	for _, tt := range tests {
		t.Run(tt.d.DirectiveKind(), func(t *testing.T) {
			got, err := codec.Encode(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Encode =\n%s\nwant\n%s", got, tt.want)
			}
			if err := reg.Validate("directive."+tt.d.DirectiveKind(), decodeJSON(t, got)); err != nil {
				t.Errorf("log form fails its schema: %v", err)
			}
			back, err := codec.Decode(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := codec.Encode(back)
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(got) {
				t.Errorf("decode/encode changed the log form:\n%s\n%s", got, again)
			}
		})
	}
}

func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDecodeRejectsMalformedLogForms(t *testing.T) {
	codec := agents.NewDirectiveCodec()
	for _, in := range []string{
		``, `[]`, `{}`, `{"kind":""}`, `{"kind":7}`, `{"kind":"stop","reason":7}`,
		`{"kind":"schedule","delay_ms":-5,"signal":{}}`, `{"kind":"emit","signal":{"specversion":"0.1"}}`,
	} {
		if d, err := codec.Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s) = %#v, want an error", in, d)
		}
	}
}

// A log written by a binary with more directive types stays readable and
// is written back byte for byte.
func TestUnknownKindsSurviveARoundTrip(t *testing.T) {
	codec := agents.NewDirectiveCodec()
	in := `{"kind":"send_email","to":"a@b.c", "body":"hi"}`
	d, err := codec.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := d.(agents.UnknownDirective)
	if !ok || u.Kind != "send_email" {
		t.Fatalf("Decode = %#v, want an UnknownDirective", d)
	}
	out, err := codec.Encode(u)
	if err != nil || string(out) != `{"kind":"send_email","to":"a@b.c","body":"hi"}` {
		t.Errorf("Encode = %s, %v", out, err)
	}
}

type sendEmail struct {
	To   string `json:"to"`
	Body string `json:"body,omitempty"`
}

func (sendEmail) DirectiveKind() string { return "send_email" }

type badKindMember struct {
	Kind string `json:"kind"`
}

func (badKindMember) DirectiveKind() string { return "bad_kind_member" }

type notSnake struct{}

func (notSnake) DirectiveKind() string { return "SendEmail" }

func TestRegisteringThirdPartyDirectives(t *testing.T) {
	codec := agents.NewDirectiveCodec()
	if _, err := codec.Encode(sendEmail{To: "x"}); err == nil {
		t.Error("encoding an unregistered kind succeeded")
	}
	if err := agents.RegisterDirective[sendEmail](codec); err != nil {
		t.Fatal(err)
	}
	if err := agents.RegisterDirective[sendEmail](codec); err == nil {
		t.Error("registering a kind twice succeeded")
	}
	if err := agents.RegisterDirective[agents.Stop](codec); err == nil {
		t.Error("registering over a built-in kind succeeded")
	}
	if err := agents.RegisterDirective[badKindMember](codec); err == nil || !strings.Contains(err.Error(), "kind") {
		t.Errorf("a type with a kind member: %v", err)
	}
	if err := agents.RegisterDirective[notSnake](codec); err == nil {
		t.Error("a kind that is not lower_snake_case was accepted")
	}
	b, err := codec.Encode(sendEmail{To: "x"})
	if err != nil || string(b) != `{"kind":"send_email","to":"x"}` {
		t.Fatalf("Encode = %s, %v", b, err)
	}
	d, err := codec.Decode(b)
	if err != nil || d != (sendEmail{To: "x"}) {
		t.Errorf("Decode = %#v, %v", d, err)
	}
	all, err := codec.EncodeAll([]agents.Directive{sendEmail{To: "y"}, agents.Stop{}})
	if err != nil || string(all) != `[{"kind":"send_email","to":"y"},{"kind":"stop"}]` {
		t.Errorf("EncodeAll = %s, %v", all, err)
	}
	ds, err := codec.DecodeAll(all)
	if err != nil || len(ds) != 2 || ds[0] != (sendEmail{To: "y"}) || ds[1] != (agents.Stop{}) {
		t.Errorf("DecodeAll = %#v, %v", ds, err)
	}
	if !strings.Contains(strings.Join(codec.Kinds(), ","), "send_email") {
		t.Errorf("Kinds() = %q", codec.Kinds())
	}
}

// TestCmdCompletesAndChecksDirectives covers what Cmd does to the
// directives an action returns: ids, sources, times and causation derived
// from the origin; malformed directives replaced by Error directives.
func TestCmdCompletesAndChecksDirectives(t *testing.T) {
	emptySignal := bus.Signal{}
	withID := testSignal(t, "x.y", "own-id")
	good, _ := agents.NewSignal("x.y", nil)
	badType, _ := agents.NewSignal("x..y", nil)
	tests := []struct {
		name string
		d    agents.Directive
		want string // substring of the encoded directive Cmd returns
	}{
		{"emit gets derived id, source, time, causation", agents.Emit{Signal: good},
			`"id":"o1.0","source":"/agent/a1","type":"x.y","time":"2025-01-02T03:04:05Z","causationid":"o1","correlationid":"corr"`},
		{"emit keeps its own id", agents.Emit{Signal: withID}, `"id":"own-id"`},
		{"emit of an empty signal", agents.Emit{Signal: emptySignal}, `"type":"invalid_directive"`},
		{"emit of a signal with a bad type", agents.Emit{Signal: badType}, `"type":"invalid_directive"`},
		{"emit with a dispatch without adapter", agents.Emit{Signal: good, Dispatch: &agents.Dispatch{}}, `"type":"invalid_directive"`},
		{"emit by pointer", &agents.Emit{Signal: good}, `{"kind":"emit","signal":{"specversion":"1.0","id":"o1.0"`},
		{"nil emit pointer", (*agents.Emit)(nil), `"type":"invalid_directive"`},
		{"schedule rounds up to a millisecond", agents.Schedule{Delay: 1500 * time.Microsecond, Signal: good}, `"delay_ms":2`},
		{"schedule with a negative delay", agents.Schedule{Delay: -1, Signal: good}, `"type":"invalid_directive"`},
		{"schedule of a message is a jido.scheduled signal", agents.Schedule{Delay: time.Second, Message: map[string]any{"remind": "tea"}},
			`"delay_ms":1000,"signal":{"specversion":"1.0","id":"o1.0","source":"/agent/a1","type":"jido.scheduled","datacontenttype":"application/json","time":"2025-01-02T03:04:05Z","data":{"message":{"remind":"tea"}},"causationid":"o1","correlationid":"corr"}}`},
		{"schedule of a plain string", agents.Schedule{Message: "tea"}, `"type":"jido.scheduled","datacontenttype":"application/json","time":"2025-01-02T03:04:05Z","data":{"message":"tea"},"causationid":"o1"`},
		{"schedule of a message and a signal", agents.Schedule{Signal: good, Message: "tea"}, `"type":"invalid_directive"`},
		{"schedule of a message JSON cannot encode", agents.Schedule{Message: func() {}}, `"type":"invalid_directive"`},
		{"schedule of neither", agents.Schedule{Delay: time.Second}, `"type":"invalid_directive"`},
		{"cron without expr", agents.Cron{JobID: "j"}, `"type":"invalid_directive"`},
		{"cron signal gets an id", agents.Cron{JobID: "j", Expr: "* * * * *", Signal: &good}, `"id":"o1.0"`},
		{"cron_cancel without job", agents.CronCancel{}, `"type":"invalid_directive"`},
		{"schedule_cancel without signal", agents.ScheduleCancel{}, `"type":"invalid_directive"`},
		{"spawn without type", agents.SpawnAgent{Tag: "t"}, `"type":"invalid_directive"`},
		{"spawn with a slash in the tag", agents.SpawnAgent{Type: "counter", Tag: "a/b"}, `"type":"invalid_directive"`},
		{"spawn with an unknown restart", agents.SpawnAgent{Type: "counter", Tag: "a", Restart: "sometimes"}, `"type":"invalid_directive"`},
		{"spawn opts are normalised", agents.SpawnAgent{Type: "counter", Tag: "a", Opts: map[string]any{"n": 3}}, `"opts":{"n":3}`},
		{"stop_child without tag", agents.StopChild{}, `"type":"invalid_directive"`},
		{"run_instruction inherits the origin", agents.RunInstruction{Instruction: agents.Instruction{Action: "f"}}, `"origin":{"id":"o1","time":"2025-01-02T03:04:05Z","correlationid":"corr"}`},
		{"run_instruction without action", agents.RunInstruction{}, `"type":"invalid_directive"`},
		{"error without err", agents.Error{}, `"error":{"type":"action_failed"`},
		{"nil directive", nil, `"type":"invalid_directive"`},
		{"stop passes through", agents.Stop{Reason: "r"}, `{"kind":"stop","reason":"r"}`},
	}
	codec := agents.NewDirectiveCodec()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := agents.MustDefine(agents.Spec{Name: "emitter", Actions: []agents.Action{{
				Name: "go",
				Run: func(agents.Env, json.RawMessage) (agents.Result, error) {
					return agents.Result{Directives: []agents.Directive{tt.d}}, nil
				},
			}}})
			a, err := def.New("a1", nil)
			if err != nil {
				t.Fatal(err)
			}
			in := agents.Instruction{Action: "go", Origin: agents.Origin{ID: "o1", Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), CorrelationID: "corr"}}
			_, dirs := agents.Cmd(a, in)
			if len(dirs) != 1 {
				t.Fatalf("Cmd returned %d directives", len(dirs))
			}
			b, err := codec.Encode(dirs[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("directive %s\ndoes not contain %s", b, tt.want)
			}
		})
	}
	// The signal an action returned is not modified by Cmd.
	if good.ID() != "" || good.Source() != "" {
		t.Errorf("Cmd modified the action's signal: id %q source %q", good.ID(), good.Source())
	}
}

// TestEmitByPointer: an Emit an action gives by pointer comes out of Cmd
// and Step as the Emit it would have given by value, and TransformResult
// hooks see it as one; the action's Emit is not modified.
func TestEmitByPointer(t *testing.T) {
	sig, err := agents.NewSignal("x.y", json.RawMessage(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	kept := &agents.Emit{Signal: sig, Dispatch: &agents.Dispatch{Adapter: "nats", Target: "t"}}
	var hookSaw []agents.Directive
	spec := func(d agents.Directive) agents.Spec {
		return agents.Spec{
			Name: "emitter",
			Actions: []agents.Action{{Name: "go", Run: func(agents.Env, json.RawMessage) (agents.Result, error) {
				return agents.Result{Directives: []agents.Directive{d}}, nil
			}}},
			Routes: []agents.Route{{Pattern: "go", Action: "go"}},
			Skills: []agents.Attachment{agents.Use(agents.Skill{
				Name: "watch", StateKey: "watch", SignalPatterns: []string{"go"},
				TransformResult: func(_ bus.Signal, dirs []agents.Directive, _ map[string]any) ([]agents.Directive, error) {
					hookSaw = dirs
					return dirs, nil
				},
			}, nil)},
		}
	}
	byValue, _ := agents.MustDefine(spec(*kept)).New("a1", nil)
	byPointer, _ := agents.MustDefine(spec(kept)).New("a1", nil)
	in := agents.Instruction{Action: "go", Origin: agents.Origin{ID: "o1", Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}}
	_, want := agents.Cmd(byValue, in)
	_, got := agents.Cmd(byPointer, in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Cmd with *Emit = %#v, want %#v", got, want)
	}
	_, want = agents.Step(byValue, testSignal(t, "go", "s1"))
	_, got = agents.Step(byPointer, testSignal(t, "go", "s1"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Step with *Emit = %#v, want %#v", got, want)
	}
	if len(hookSaw) != 1 || !reflect.DeepEqual(hookSaw[0], *kept) {
		t.Errorf("TransformResult saw %#v, want the Emit", hookSaw)
	}
	if kept.Signal.ID() != "" || kept.Signal.Source() != "" {
		t.Errorf("Cmd modified the action's Emit: %#v", kept.Signal)
	}
}

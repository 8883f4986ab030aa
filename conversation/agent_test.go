package conversation_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func convSignal(t *testing.T, typ, id, causation, data string) bus.Signal {
	t.Helper()
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource("/test")
	s.SetTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if causation != "" {
		s.SetExtension(bus.ExtCausationID, causation)
	}
	if err := bus.SetJSONData(&s, json.RawMessage(data)); err != nil {
		t.Fatal(err)
	}
	return s
}

func errorsOf(ds []agents.Directive) []agents.Error {
	var out []agents.Error
	for _, d := range ds {
		if e, ok := d.(agents.Error); ok {
			out = append(out, e)
		}
	}
	return out
}

func TestConversationAgentValidatesAndTracksPendingWork(t *testing.T) {
	def, err := conversation.NewAgentWith(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := conversation.Key("p1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := def.New(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		sig       bus.Signal
		errType   string // "" for an accepted event
		errPrefix string // the start of the error message: the JSON pointer
	}{
		{convSignal(t, conversation.Started, "e1", "req", `{"project_id":"p1","conversation_id":"c1"}`), "", ""},
		{convSignal(t, conversation.ToolRequested, "e2", "e1", `{"call_id":"t1","name":"grep"}`), "", ""},
		{convSignal(t, conversation.ToolRequested, "e3", "e1", `{"call_id":"t2","name":"ls"}`), "", ""},
		{convSignal(t, conversation.LLMRequested, "e4", "e3", `{}`), "", ""},
		{convSignal(t, conversation.ToolCompleted, "e5", "t1", `{"call_id":"t1","output":"x"}`), "", ""},
		{convSignal(t, conversation.ToolRequested, "bad1", "e1", `{"name":"grep"}`), conversation.ReasonInvalidEvent, "/data/call_id:"},
		{convSignal(t, conversation.UserMessage, "bad2", "", `{"text":"hi"}`), conversation.ReasonInvalidEvent, "/causationid:"},
		{convSignal(t, conversation.UserMessage, "bad3", "e1", `{"text":7}`), conversation.ReasonInvalidEvent, "/data/text:"},
		{convSignal(t, conversation.AssistantDelta, "d1", "e4", `{"text":"par"}`), conversation.ReasonTransientEvent, ""},
		{convSignal(t, "conversation.unheard.of", "u1", "e1", `{}`), conversation.ReasonUnknownEvent, ""},
		{convSignal(t, conversation.Cancel, "e6", "e1", `{}`), "", ""},
	}
	for _, st := range steps {
		before, _ := agents.EncodeState(a.State)
		next, ds := agents.Step(a, st.sig)
		errs := errorsOf(ds)
		if st.errType == "" {
			if len(errs) > 0 {
				t.Fatalf("%s %s refused: %+v", st.sig.Type(), st.sig.ID(), errs[0].Err)
			}
			a = next
			continue
		}
		if len(errs) != 1 || errs[0].Err.Type != st.errType || !strings.HasPrefix(errs[0].Err.Message, st.errPrefix) {
			t.Errorf("%s %s: directives %+v, want one error %s starting %q", st.sig.Type(), st.sig.ID(), ds, st.errType, st.errPrefix)
			continue
		}
		// Refused, so the runtime does not keep it as a conversation entry.
		if !errs[0].Refused {
			t.Errorf("%s %s: the error %s is not a refusal", st.sig.Type(), st.sig.ID(), errs[0].Err)
		}
		if after, _ := agents.EncodeState(next.State); string(after) != string(before) {
			t.Errorf("%s %s was refused but changed the state", st.sig.Type(), st.sig.ID())
		}
	}
	conv := a.State.Object("conversation")
	pending := conv.Object("pending_tools")
	if len(pending) != 1 || pending["t2"] != "ls" {
		t.Errorf("pending tools %v, want t2 only", pending)
	}
	if conv.String("llm_request") != "e4" || conv.String("status") != "cancelled" || conv.Number("events") != 6 || conv.String("last_event_id") != "e6" {
		t.Errorf("state %v", conv)
	}
	// Replaying the accepted events gives the same state: the agent is pure.
	b, err := def.New(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if st.errType == "" {
			b, _ = agents.Step(b, st.sig)
		}
	}
	x, _ := agents.EncodeState(a.State)
	y, _ := agents.EncodeState(b.State)
	if string(x) != string(y) {
		t.Errorf("replay gave %s, want %s", y, x)
	}
}

func TestConversationOpenWork(t *testing.T) {
	def, err := conversation.NewAgentWith(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := def.New("p1/c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func() bool {
		t.Helper()
		state, err := agents.EncodeState(a.State)
		if err != nil {
			t.Fatal(err)
		}
		st, err := conversation.ReadState(state)
		if err != nil {
			t.Fatal(err)
		}
		return st.OpenWork()
	}
	steps := []struct {
		sig  bus.Signal
		open bool
	}{
		{convSignal(t, conversation.Started, "e1", "req", `{"project_id":"p1","conversation_id":"c1"}`), false},
		{convSignal(t, conversation.ToolRequested, "e2", "e1", `{"call_id":"t1","name":"grep"}`), true},
		{convSignal(t, conversation.ToolCompleted, "e3", "t1", `{"call_id":"t1","output":"x"}`), false},
		{convSignal(t, conversation.LLMRequested, "e4", "e3", `{}`), true},
		{convSignal(t, conversation.LLMCompleted, "e5", "e4", `{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}`), false},
	}
	if open() {
		t.Fatal("a new conversation has open work")
	}
	for _, st := range steps {
		next, ds := agents.Step(a, st.sig)
		if errs := errorsOf(ds); len(errs) > 0 {
			t.Fatalf("%s refused: %+v", st.sig.Type(), errs[0].Err)
		}
		if a = next; open() != st.open {
			t.Fatalf("after %s: open work = %v, want %v", st.sig.Type(), !st.open, st.open)
		}
	}
	if _, err := conversation.ReadState([]byte(`[`)); err == nil {
		t.Fatal("a broken state reads as fine")
	}
}

// TestConversationLoopDecidesAfterValidEvents: the loop of
// NewConversationWith sees each valid event whole (causationid included)
// with the state before it, its operations and directives join the
// agent's, and an invalid event never reaches it.
func TestConversationLoopDecidesAfterValidEvents(t *testing.T) {
	var seen []string
	loop := func(env agents.Env, whole json.RawMessage) (agents.Result, error) {
		var ev struct {
			ID          string `json:"id"`
			CausationID string `json:"causationid"`
		}
		if err := json.Unmarshal(whole, &ev); err != nil {
			return agents.Result{}, err
		}
		seen = append(seen, ev.ID+"<"+ev.CausationID)
		emit, err := agents.NewEmit("loop.decided", map[string]any{"after": ev.ID, "events_before": env.State.Number("events")})
		if err != nil {
			return agents.Result{}, err
		}
		return agents.Result{
			Ops:        []agents.StateOp{agents.SetPath{Path: []string{"loop"}, Value: ev.ID}},
			Directives: []agents.Directive{emit},
		}, nil
	}
	def, err := conversation.NewAgentWith(loop)
	if err != nil {
		t.Fatal(err)
	}
	a, err := def.New("p1/c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, ds := agents.Step(a, convSignal(t, conversation.UserMessage, "u1", "u1", `{"text":"hi"}`))
	if len(ds) != 1 || ds[0].DirectiveKind() != agents.KindEmit || !strings.Contains(string(ds[0].(agents.Emit).Signal.Data()), `"events_before":0`) {
		t.Fatalf("directives %#v, want the loop's emit, decided on the state before the event", ds)
	}
	if got, _ := a.State.Get("conversation", "loop"); got != "u1" {
		t.Fatalf("state conversation.loop = %v, want the loop's operation applied", got)
	}
	a, ds = agents.Step(a, convSignal(t, conversation.UserMessage, "bad", "", `{"text":"no causation"}`))
	if len(errorsOf(ds)) != 1 || len(seen) != 1 {
		t.Fatalf("an invalid event: directives %#v, loop saw %v; want a refusal and no loop call", ds, seen)
	}
	if seen[0] != "u1<u1" {
		t.Fatalf("loop saw %v, want the whole event with its causationid", seen)
	}
	_ = a
}

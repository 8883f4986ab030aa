package convapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestClientAgainstServer runs the read verbs and fork over NATS against
// a log a client wrote (no agent of its own), errors included; a Reader
// answers ls and show the same and refuses to fork.
func TestClientAgainstServer(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	_, err := s.log.Append(ctx, conversation.Stream("p1/c1"), eventlog.NoStream,
		event(t, conversation.Started, "e1", `{"project_id":"p1","conversation_id":"c1"}`),
		event(t, conversation.UserMessage, "e2", `{"text":"hi"}`),
		event(t, conversation.ToolRequested, "e3", `{"call_id":"t1","name":"ls"}`),
		event(t, conversation.ToolCompleted, "e4", `{"call_id":"t1","output":"a b"}`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.log.Append(ctx, conversation.Stream("p2/c9"), eventlog.NoStream, event(t, conversation.Started, "x1", `{"project_id":"p2","conversation_id":"c9"}`)); err != nil {
		t.Fatal(err)
	}
	s.catchUp(t)
	reader := convapi.Reader{Runner: s.runner, Log: s.log}
	if _, err := reader.Fork(ctx, convapi.ForkRequest{Conv: "p1/c1", Seq: 3}); !errors.Is(err, &bus.Error{Type: bus.ReasonUnavailable}) {
		t.Errorf("a Reader's fork (no node to start the fork's agent): %v", err)
	}
	if _, err := reader.Fork(ctx, convapi.ForkRequest{Conv: "p1/c1"}); !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) {
		t.Errorf("a Reader's fork without a seq: %v", err)
	}
	c := s.client()

	convs, err := c.List(ctx, convapi.ListRequest{})
	if err != nil || len(convs.Conversations) != 2 || convs.Conversations[0].Conv != "p1/c1" || convs.Conversations[1].State != "idle" {
		t.Fatalf("conv ls = %+v, %v", convs, err)
	}
	if local, err := reader.List(ctx, convapi.ListRequest{}); err != nil || len(local.Conversations) != 2 {
		t.Fatalf("a Reader's conv ls = %+v, %v", local, err)
	}
	convs, err = c.List(ctx, convapi.ListRequest{Project: "p2"})
	if err != nil || len(convs.Conversations) != 1 || convs.Conversations[0].Conv != "p2/c9" {
		t.Fatalf("conv ls p2 = %+v, %v", convs, err)
	}
	convs, err = c.List(ctx, convapi.ListRequest{Limit: 1})
	if err != nil || len(convs.Conversations) != 1 || convs.Next != "p1/c1" {
		t.Fatalf("conv ls page = %+v, %v", convs, err)
	}
	show, err := c.Show(ctx, convapi.ShowRequest{Conv: "p1/c1"})
	if err != nil || show.View != "timeline" || !strings.Contains(string(show.State), `"call_id":"t1"`) {
		t.Fatalf("conv show = %+v, %v", show, err)
	}
	show, err = c.Show(ctx, convapi.ShowRequest{Conv: "p1/c1", View: "llm_context", Seq: 2})
	if err != nil || strings.Contains(string(show.State), "tool") {
		t.Fatalf("conv show at 2 = %s, %v", show.State, err)
	}
	for _, bad := range []convapi.ShowRequest{{Conv: "nope"}, {Conv: "p1/c1", View: "x"}} {
		if _, err := c.Show(ctx, bad); !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) {
			t.Errorf("conv show %+v: %v", bad, err)
		}
	}

	fork, err := c.Fork(ctx, convapi.ForkRequest{Conv: "p1/c1", Seq: 3})
	if err != nil || fork.Conv != "p1/c1-fork-3" || fork.Events != 4 {
		t.Fatalf("fork = %+v, %v", fork, err)
	}
	if info, err := s.rt.State("p1/c1-fork-3"); err != nil || info.Type != conversation.AgentType {
		t.Fatalf("the fork's agent: %+v %v, want a conversation running", info, err)
	}
	if _, err := c.Fork(ctx, convapi.ForkRequest{Conv: "p1/c1", Seq: 2, As: "p1/c1-fork-3"}); !errors.Is(err, &bus.Error{Type: "conflict"}) {
		t.Errorf("fork onto an existing conversation: %v", err)
	}
	if _, err := c.Fork(ctx, convapi.ForkRequest{Conv: "p1/gone", Seq: 2}); !errors.Is(err, &bus.Error{Type: bus.ReasonNotFound}) {
		t.Errorf("fork of a missing conversation: %v", err)
	}
	s.catchUp(t)
	st, err := c.Show(ctx, convapi.ShowRequest{Conv: "p1/c1-fork-3", View: "status"})
	if err != nil || !strings.Contains(string(st.State), `"parent":{"conversation":"p1/c1","seq":3`) || !strings.Contains(string(st.State), `"state":"idle"`) {
		t.Fatalf("fork status = %s, %v", st.State, err)
	}
}

// TestUnknownFieldsAreRefused: every verb refuses a request with a field
// it does not know (a misspelt "view" would otherwise show the default
// view as if it were the one asked for), as invalid_request in the one
// reply shape, and files it as a dead letter.
func TestUnknownFieldsAreRefused(t *testing.T) {
	s := newService(t, "p")
	dlq, err := s.nc.SubscribeSync("jido.dlq.invalid_request")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ subject, body string }{
		{"jido.api.conv.start", `{"project":"p","conv":"c"}`},
		{"jido.api.conv.stop", `{"project":"p","conversation":"c","why":"x"}`},
		{"jido.api.conv.ls", `{"projct":"p"}`},
		{"jido.api.conv.show", `{"conv":"p/c","veiw":"tools"}`},
		{"jido.api.conv.fork", `{"conv":"p/c","at":1,"new":"p/d"}`},
		{"jido.api.conv.send", `{"conv":"p/c","txt":"hi"}`},
		{"jido.api.conv.cancel", `{"conv":"p/c","because":"x"}`},
		{"jido.api.conv.approve", `{"conv":"p/c","call":"x","decision":"approve"}`},
	}
	for _, tc := range cases {
		m, err := s.nc.Request(tc.subject, []byte(tc.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(m.Data), `{"ok":false,"error":{"type":"invalid_request","message":"request: json: unknown field`) {
			t.Fatalf("%s %s: reply %s, want invalid_request naming the unknown field", tc.subject, tc.body, m.Data)
		}
		if _, err := dlq.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("%s: no dead letter: %v", tc.subject, err)
		}
	}
}

// TestMovedVerbsSayWhereTheyWent: the project area's conversation verbs of
// the release before answer, whatever the request, with an error of type
// moved naming the conv verb that replaces each, and nothing is done.
func TestMovedVerbsSayWhereTheyWent(t *testing.T) {
	s := newService(t, "p1")
	for verb, to := range map[string]string{"conv.start": "jido.api.conv.start", "conv.stop": "jido.api.conv.stop", "conv.ls": "jido.api.conv.ls"} {
		m, err := s.nc.Request("jido.api.project."+verb, []byte(`{"project":"p1","conversation":"c1"}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(m.Data), `{"ok":false,"error":{"type":"moved","message":"jido.api.project.`+verb+` has moved to `+to+` (`) {
			t.Errorf("project.%s: %s, want moved naming %s", verb, m.Data, to)
		}
	}
	if _, err := s.rt.State("p1/c1"); err == nil {
		t.Fatal("the moved conv.start started a conversation")
	}
	if len(s.projects.records) != 0 {
		t.Fatalf("the moved verbs recorded %v", s.projects.records)
	}
}

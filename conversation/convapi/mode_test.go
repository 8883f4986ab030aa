package convapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestConvModeStartAndChange: conv.start refuses a mode that is none of
// plan, ask, auto (nothing started) and records the one given in
// conversation.started; conv.mode appends conversation.mode with who
// set it, and refuses an unknown or missing mode, or a conversation that
// does not run, with nothing appended.
func TestConvModeStartAndChange(t *testing.T) {
	n := nodeWithProject(t)
	svc, ctx := n.Conversations(), context.Background()
	if _, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Mode: "read-only"}); bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), "want plan") {
		t.Fatalf("start with mode read-only: %v, want invalid_request naming the modes", err)
	}
	if ids := convIDs(t, n, "p1"); len(ids) != 0 {
		t.Fatalf("a refused start left conversations: %v", ids)
	}
	if _, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Mode: conversation.ModePlan}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req  convapi.ModeRequest
		want string
	}{
		{convapi.ModeRequest{Conv: "p1/c1"}, bus.ReasonInvalidRequest},
		{convapi.ModeRequest{Conv: "p1/c1", Mode: "yolo"}, bus.ReasonInvalidRequest},
		{convapi.ModeRequest{Conv: "p1/nope", Mode: conversation.ModeAsk}, bus.ReasonNotFound},
	} {
		if _, err := svc.Mode(ctx, c.req); bus.ErrorType(err) != c.want {
			t.Errorf("conv.mode %+v: %v, want %s", c.req, err, c.want)
		}
	}
	if _, err := svc.Mode(ctx, convapi.ModeRequest{Conv: "p1/c1", Mode: conversation.ModeAsk, By: "alice", Reason: "review edits"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for en, err := range n.Log().ReadStream(conversation.Stream("p1/c1"), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		var d conversation.Data
		if err := json.Unmarshal(en.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		switch en.Event.Type() {
		case conversation.Started, conversation.ModeChanged:
			got = append(got, en.Event.Type()+":"+d.Mode+":"+d.By)
		}
	}
	if want := "conversation.started:plan: conversation.mode:ask:alice"; strings.Join(got, " ") != want {
		t.Fatalf("the log has %q, want %q", strings.Join(got, " "), want)
	}
}

package a2a

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// unrecordedHost is a fakeHost whose records fail while full is set, as
// on a node whose disk is full.
type unrecordedHost struct {
	*fakeHost
	full atomic.Bool
}

func (h *unrecordedHost) RecordGatewayRequest(ctx context.Context, project string, r gateway.Request) error {
	if h.full.Load() {
		return bus.Errorf(bus.ReasonUnavailable, "the event log could not write to disk (injected)")
	}
	return h.fakeHost.RecordGatewayRequest(ctx, project, r)
}

// TestUnrecordedRequestFails: a request that would succeed but whose
// project.gateway.request cannot be committed is answered with an error
// saying so, never with the success the log does not show.
func TestUnrecordedRequestFails(t *testing.T) {
	ctx := testCtx(t)
	h := &unrecordedHost{fakeHost: newFakeHost("p1")}
	srv := serve(t, h, Options{})
	c, _ := client(t, ctx, srv.URL, "p1")
	res, err := c.SendMessage(ctx, userText("read a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	done := res.(*sdk.Task)
	h.full.Store(true)

	says := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "could not be committed") {
			t.Errorf("%s answered %v, want an error saying its record failed", what, err)
		}
	}
	_, err = c.SendMessage(ctx, userText("again"))
	says("message/send", err)
	_, err = c.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hold on")), Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	says("message/send (returnImmediately)", err)
	_, err = c.GetTask(ctx, &sdk.GetTaskRequest{ID: done.ID})
	says("tasks/get", err)
	var last error
	for _, err := range c.SendStreamingMessage(ctx, userText("stream")) {
		if err != nil {
			last = err
		}
	}
	says("message/stream", last)
}

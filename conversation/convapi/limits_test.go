package convapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
)

// TestConvStartBoundsLimits: a conversation whose limits are out of
// their bounds (max_steps 100,000,000 was taken) is refused with the
// bound named, and none is started; limits within them are kept.
func TestConvStartBoundsLimits(t *testing.T) {
	n := nodeWithProject(t)
	svc, ctx := n.Conversations(), context.Background()
	for _, c := range []struct {
		limits conversation.Limits
		says   string
	}{
		{conversation.Limits{MaxSteps: 100_000_000}, "limits.max_steps 100000000 is out of bounds: give 1 to 1000"},
		{conversation.Limits{MaxSteps: -1}, "limits.max_steps -1"},
		{conversation.Limits{MaxToolCalls: conversation.MaxMaxToolCalls + 1}, "limits.max_tool_calls"},
		{conversation.Limits{ParallelTools: 1 << 30}, "limits.parallel_tools"},
	} {
		_, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Limits: &c.limits})
		if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), c.says) {
			t.Errorf("limits %+v: %v, want invalid_request saying %q", c.limits, err, c.says)
		}
	}
	if ids := convIDs(t, n, "p1"); len(ids) != 0 {
		t.Fatalf("refused starts left conversations: %v", ids)
	}
	ok := conversation.Limits{MaxSteps: conversation.MaxMaxSteps, ParallelTools: 2}
	if _, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Limits: &ok}); err != nil {
		t.Fatalf("limits at their bounds: %v", err)
	}
}

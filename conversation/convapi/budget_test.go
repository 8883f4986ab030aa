package convapi_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestConvStartBudget: a negative or non-finite budget is refused naming
// the member, and none is started; a budget given is recorded in
// conversation.started, where the loop reads it.
func TestConvStartBudget(t *testing.T) {
	n := nodeWithProject(t)
	svc, ctx := n.Conversations(), context.Background()
	for _, c := range []struct {
		budget conversation.Budget
		says   string
	}{
		{conversation.Budget{MaxTokens: -5}, "budget.max_tokens -5 is negative"},
		{conversation.Budget{MaxCostUSD: -0.5}, "budget.max_cost_usd -0.5"},
		{conversation.Budget{MaxCostUSD: math.Inf(1)}, "budget.max_cost_usd +Inf"},
	} {
		_, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Budget: &c.budget})
		if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), c.says) {
			t.Errorf("budget %+v: %v, want invalid_request saying %q", c.budget, err, c.says)
		}
	}
	if ids := convIDs(t, n, "p1"); len(ids) != 0 {
		t.Fatalf("refused starts left conversations: %v", ids)
	}
	want := conversation.Budget{MaxTokens: 5000, MaxCostUSD: 0.25}
	if _, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Budget: &want}); err != nil {
		t.Fatal(err)
	}
	for en, err := range n.Log().ReadStream(conversation.Stream("p1/c1"), eventlog.ReadOptions{Types: conversation.Started}) {
		if err != nil {
			t.Fatal(err)
		}
		var d conversation.Data
		if err := json.Unmarshal(en.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		if d.Budget == nil || *d.Budget != want {
			t.Fatalf("conversation.started budget %+v, want %+v", d.Budget, want)
		}
		return
	}
	t.Fatal("no conversation.started")
}

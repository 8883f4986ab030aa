package views

import (
	"testing"

	"github.com/jido-bus/jido-bus/conversation"
)

// TestStatusAndDiagnosticsCountUsageAndCost: status sums tokens in and
// out and cost_usd (as amounts: 0.1 + 0.2 is 0.3), keeps the budget and
// says once it is spent; diagnostics sums cost per model beside usage.
func TestStatusAndDiagnosticsCountUsageAndCost(t *testing.T) {
	st := NewStatus()
	g := DiagnosticsProjection{}.Init()
	seq := uint64(0)
	fold := func(typ string, d conversation.Data) {
		seq++
		ev := &Event{Type: typ, ID: typ, Seq: seq, Data: d}
		st.Fold(ev)
		g.fold(ev)
	}
	budget := &conversation.Budget{MaxTokens: 100, MaxCostUSD: 0.3}
	fold(conversation.Started, conversation.Data{ProjectID: "p", ConversationID: "c", Budget: budget})
	fold(conversation.LLMCompleted, conversation.Data{Model: "a", Usage: &conversation.Usage{InputTokens: 10, OutputTokens: 2}, CostUSD: 0.1})
	fold(conversation.LLMCompleted, conversation.Data{Model: "b", Usage: &conversation.Usage{InputTokens: 30, OutputTokens: 5}, CostUSD: 0.2})
	fold(conversation.LLMCompleted, conversation.Data{Model: "b", Usage: &conversation.Usage{InputTokens: 1, OutputTokens: 1}})
	if st.Usage != (conversation.Usage{InputTokens: 41, OutputTokens: 8}) || st.CostUSD != 0.3 || st.Budget == nil || *st.Budget != *budget {
		t.Fatalf("status usage %+v cost %v budget %+v, want 41 in, 8 out, 0.3 USD and the budget", st.Usage, st.CostUSD, st.Budget)
	}
	if st.State != StateIdle {
		t.Fatalf("state %s before the budget is spent, want idle", st.State)
	}
	fold(conversation.BudgetExceeded, conversation.Data{What: conversation.BudgetCost, Limit: 0.3, Used: 0.3})
	if st.State != StateBudgetExceeded || st.BudgetExceeded != conversation.BudgetCost {
		t.Fatalf("state %s (%q), want %s naming cost", st.State, st.BudgetExceeded, StateBudgetExceeded)
	}
	if g.CostUSD != 0.3 || g.CostByModel["a"] != 0.1 || g.CostByModel["b"] != 0.2 || g.UsageByModel["b"].InputTokens != 31 {
		t.Fatalf("diagnostics cost %v by model %v usage %v", g.CostUSD, g.CostByModel, g.UsageByModel)
	}
}

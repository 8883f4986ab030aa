package conversation

import (
	"fmt"
	"strings"
)

// allowed reports whether the conversation may call tool: a delegated
// conversation only the tools its parent handed on (Data.Tools).
func (d *decider) allowed(tool string) bool {
	if d.st.Tools == nil {
		return true
	}
	return allowsTool(*d.st.Tools, tool)
}

// notDelegated says why a call of tool outside the conversation's tools
// is not run.
func (d *decider) notDelegated(tool string) string {
	have := "no tools"
	if len(*d.st.Tools) > 0 {
		have = "only " + strings.Join(*d.st.Tools, ", ")
	}
	return fmt.Sprintf("not run: %s was not handed to this conversation by the one that delegated to it, which gave it %s", tool, have)
}

// childBudget is the budget a delegate call hands its child: what is
// left of the conversation's (nil: no budget, or another tool).
func (d *decider) childBudget(tool string) *Budget {
	st := d.st
	if tool != DelegateTool || st.Budget == nil {
		return nil
	}
	left := Budget{}
	if st.Budget.MaxTokens > 0 {
		left.MaxTokens = max(st.Budget.MaxTokens-st.Used.Tokens, 1)
	}
	if st.Budget.MaxCostUSD > 0 {
		left.MaxCostUSD = max(AddUSD(st.Budget.MaxCostUSD, -st.Used.CostUSD), 1e-9)
	}
	return &left
}

// delegated counts what a delegate call's child spent (the usage and
// cost_usd of its outcome) toward the conversation's budget; once that
// spends it, the turn ends as after an LLM call that did: the calls not
// started are failed and no model is asked again.
func (d *decider) delegated() {
	st := d.st
	d.spend()
	if st.Budget == nil || d.copied || st.Ending == ReasonBudget || !d.budgetReached() {
		return
	}
	d.budgetRecord("budget."+st.Turn, d.ev.ID)
	st.Ending = ReasonBudget
	for _, id := range d.order(callRequested) {
		d.close(id, st.Pending[id], ToolFailed, ReasonBudget, fmt.Sprintf("not run: the conversation's budget is spent (%s)", d.budgetText()))
	}
}

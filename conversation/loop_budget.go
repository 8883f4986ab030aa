package conversation

import (
	"fmt"
	"strconv"
)

// spend counts the usage and cost of a conversation.llm.completed under a
// budget, whichever call it answers (a late answer was paid for too); a
// fork's copies of its parent's calls were its parent's spending.
func (d *decider) spend() {
	st, data := d.st, d.ev.Data
	if st.Budget == nil || d.copied {
		return
	}
	if data.Usage != nil {
		st.Used.Tokens += data.Usage.InputTokens + data.Usage.OutputTokens
	}
	st.Used.CostUSD = AddUSD(st.Used.CostUSD, data.CostUSD)
}

// budgetReached reports whether a total has reached its limit, and
// notes which in Exceeded (tokens first).
func (d *decider) budgetReached() bool {
	st := d.st
	if st.Budget == nil {
		return false
	}
	switch {
	case st.Exceeded != "":
	case st.Budget.MaxTokens > 0 && st.Used.Tokens >= st.Budget.MaxTokens:
		st.Exceeded = BudgetTokens
	case st.Budget.MaxCostUSD > 0 && st.Used.CostUSD >= st.Budget.MaxCostUSD:
		st.Exceeded = BudgetCost
	}
	return st.Exceeded != ""
}

// budgetSpent ends the turn whose LLM call spent the budget: the answer
// stands, its tool calls are failed without running (the model would
// never read their results), and the model is not asked again.
func (d *decider) budgetSpent() {
	st := d.st
	d.budgetRecord("budget."+st.Turn, d.ev.ID)
	if len(st.Pending) == 0 {
		d.endTurn()
		return
	}
	st.Ending = ReasonBudget
	for _, id := range d.order(callRequested) {
		d.close(id, st.Pending[id], ToolFailed, ReasonBudget, fmt.Sprintf("not run: the conversation's budget is spent (%s)", d.budgetText()))
	}
}

// budgetRecord records conversation.budget.exceeded.
func (d *decider) budgetRecord(id, causation string) {
	st := d.st
	data := map[string]any{"what": st.Exceeded}
	if st.Exceeded == BudgetTokens {
		data["limit"], data["used"] = st.Budget.MaxTokens, st.Used.Tokens
	} else {
		data["limit"], data["used"] = st.Budget.MaxCostUSD, st.Used.CostUSD
	}
	data["reason"] = fmt.Sprintf("the conversation's budget is spent (%s): no model is asked again; start a new conversation, or fork this one (conv fork), whose own calls have a budget afresh", d.budgetText())
	d.record(BudgetExceeded, id, causation, data)
}

// budgetText says what was used of which limit.
func (d *decider) budgetText() string {
	st := d.st
	if st.Exceeded == BudgetTokens {
		return fmt.Sprintf("%d of %d tokens used", st.Used.Tokens, st.Budget.MaxTokens)
	}
	return fmt.Sprintf("%s of %s USD used", formatUSD(st.Used.CostUSD), formatUSD(st.Budget.MaxCostUSD))
}

// formatUSD writes an amount of USD as people read it, with no more
// digits than it has.
func formatUSD(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

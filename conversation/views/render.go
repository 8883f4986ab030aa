package views

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Render writes the state of a read model (its JSON, as a projection query
// returns it) for a person: one line per item, message or fact. It is what
// `jido-bus conv show` prints without --json.
func Render(w io.Writer, view string, state json.RawMessage) error {
	switch view {
	case ViewTimeline:
		var t Timeline
		if err := json.Unmarshal(state, &t); err != nil {
			return err
		}
		renderTimeline(w, &t)
	case ViewLLMContext:
		var c LLMContext
		if err := json.Unmarshal(state, &c); err != nil {
			return err
		}
		renderLLMContext(w, &c)
	case ViewStatus:
		var s Status
		if err := json.Unmarshal(state, &s); err != nil {
			return err
		}
		renderStatus(w, &s)
	case ViewDiagnostics:
		var d Diagnostics
		if err := json.Unmarshal(state, &d); err != nil {
			return err
		}
		renderDiagnostics(w, &d)
	default:
		return fmt.Errorf("unknown view %q; want %s", view, strings.Join(Views(), ", "))
	}
	return nil
}

// clip shortens s to one line of at most n bytes for a table.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

func renderTimeline(w io.Writer, t *Timeline) {
	for _, it := range t.Items {
		switch {
		case it.Tool != nil:
			c := it.Tool
			name := c.Name
			if name == "" {
				name = "(not requested yet)"
			}
			args := clip(string(c.Args), 60)
			if c.ArgsError != "" {
				args = fmt.Sprintf("%s (not JSON: %s)", clip(c.ArgsText, 40), clip(c.ArgsError, 60))
			}
			line := fmt.Sprintf("%4d  %-9s  %s %s %s", it.Seq, it.Kind, c.CallID, name, args)
			line = strings.TrimRight(line, " ") + " -> " + c.State
			switch {
			case c.OutputRef != nil:
				line += fmt.Sprintf(" [artifact %s, %d bytes]", c.OutputRef.ID, c.OutputRef.Size)
			case len(c.Output) > 0:
				line += ": " + clip(string(c.Output), 60)
			case c.Error != nil:
				line += fmt.Sprintf(": %s: %s", c.Error.Type, clip(c.Error.Message, 60))
			case c.Reason != "":
				line += ": " + c.Reason
			}
			if c.ResultSeq > 0 {
				line += fmt.Sprintf(" (seq %d)", c.ResultSeq)
			}
			if c.Child != "" {
				line += " delegated → " + c.Child
			}
			fmt.Fprintln(w, line)
		case it.Approval != nil:
			fmt.Fprintln(w, renderApproval(it))
		case it.Error != nil:
			fmt.Fprintf(w, "%4d  %-9s  %s: %s%s\n", it.Seq, it.Kind, it.Error.Type, clip(it.Error.Message, 80), renderAttempt(it.LLM))
		default:
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%4d  %-9s  %s", it.Seq, it.Kind, clip(it.Text, 100)), " "))
		}
	}
}

// renderApproval is a line for an approval asked or given.
func renderApproval(it TimelineItem) string {
	a := it.Approval
	line := fmt.Sprintf("%4d  %-9s  %s", it.Seq, it.Kind, a.CallID)
	if it.Kind == ItemDecision {
		line += " " + a.Decision
		if a.By != "" {
			line += " by " + a.By
		}
		if a.Remember != "" {
			line += ", remember: " + a.Remember
		}
		if a.Reason != "" {
			line += ": " + clip(a.Reason, 80)
		}
		if it.Text != "" {
			line += " (" + it.Text + ")"
		}
		return line
	}
	line = strings.TrimRight(fmt.Sprintf("%s %s %s", line, a.Name, clip(string(a.Args), 60)), " ")
	if a.Reason != "" {
		line += ": " + clip(a.Reason, 80)
	}
	if a.TimeoutMS > 0 {
		// The rule the request set, not an outcome: the decision, if any,
		// is a line of its own.
		line += fmt.Sprintf(" (denied unless answered within %s)", time.Duration(a.TimeoutMS)*time.Millisecond)
	}
	return line
}

// renderAttempt says which attempt of an LLM call failed and what next.
func renderAttempt(a *LLMAttempt) string {
	if a == nil {
		return ""
	}
	var parts []string
	if a.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", a.Attempt))
	}
	if a.Status > 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", a.Status))
	}
	switch {
	case a.RetryInMS > 0:
		parts = append(parts, fmt.Sprintf("retry in %d ms", a.RetryInMS))
	case a.Retryable:
		parts = append(parts, "retryable")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func renderLLMContext(w io.Writer, c *LLMContext) {
	fmt.Fprintf(w, "messages: %d, tokens (estimate): %d, dropped: %d", len(c.Messages), c.Tokens, c.Dropped)
	if c.Compacted > 0 {
		fmt.Fprintf(w, ", compacted: %d", c.Compacted)
	}
	fmt.Fprintln(w)
	renderMessages(w, c.Messages)
	if len(c.Held) > 0 {
		fmt.Fprintf(w, "held until the tool results are in: %d\n", len(c.Held))
		renderMessages(w, c.Held)
	}
}

// renderMessages writes one line per message of an LLM call.
func renderMessages(w io.Writer, msgs []Message) {
	for _, m := range msgs {
		line := fmt.Sprintf("%4d  %-9s", m.Seq, m.Role)
		if m.ToolCallID != "" {
			line += " [" + m.ToolCallID + "]"
		}
		if m.Content != "" {
			line += "  " + clip(m.Content, 100)
		}
		for _, tc := range m.ToolCalls {
			line += fmt.Sprintf("  call %s %s %s", tc.ID, tc.Name, clip(string(tc.Args), 40))
			if tc.ArgsText != "" {
				line += " (sent as " + clip(tc.ArgsText, 40) + ")"
			}
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

func renderStatus(w io.Writer, s *Status) {
	fmt.Fprintf(w, "state: %s\n", s.State)
	if s.Parent != nil {
		fmt.Fprintf(w, "forked from: %s at seq %d (event %s)\n", s.Parent.Conversation, s.Parent.Seq, s.Parent.EventID)
	}
	if g := s.Delegated; g != nil {
		fmt.Fprintf(w, "delegated by: %s (call %s, depth %d)\n", g.Conversation, g.CallID, g.Depth)
	}
	if r := s.LLMRequest; r != nil {
		where := fmt.Sprintf("seq %d", r.Seq)
		if r.Step > 0 {
			where += fmt.Sprintf(", step %d", r.Step)
		}
		if r.Attempt > 1 {
			where += fmt.Sprintf(", attempt %d", r.Attempt)
		}
		fmt.Fprintf(w, "llm call in flight: %s (%s)\n", r.EventID, where)
	}
	if len(s.PendingTools) == 0 {
		fmt.Fprintln(w, "pending tool calls: none")
	}
	for _, p := range s.PendingTools {
		line := fmt.Sprintf("pending tool call: %s %s (%s, seq %d)", p.CallID, p.Name, p.State, p.Seq)
		if a := p.Approval; a != nil {
			line += fmt.Sprintf(": approval asked at seq %d", a.Seq)
			if a.Reason != "" {
				line += ", " + clip(a.Reason, 80)
			}
			if a.TimeoutMS > 0 && a.Decision == "" {
				line += fmt.Sprintf(", to be denied at %s unless answered", a.At.Add(time.Duration(a.TimeoutMS)*time.Millisecond).UTC().Format(time.RFC3339))
			}
			if a.Decision != "" {
				line += fmt.Sprintf("; %s by %s", a.Decision, cmp.Or(a.By, "(unknown)"))
			}
		}
		fmt.Fprintln(w, line)
	}
	if len(s.RememberedTools) > 0 {
		fmt.Fprintf(w, "approved for the conversation: %s\n", strings.Join(s.RememberedTools, ", "))
	}
	if s.Mode != "" {
		fmt.Fprintf(w, "mode: %s\n", s.Mode)
	}
	if wt := s.Worktree; wt != nil {
		fmt.Fprintf(w, "worktree: %s, branch %s\n", wt.Path, wt.Branch)
	}
	fmt.Fprintf(w, "tokens: in %d, out %d\n", s.Usage.InputTokens, s.Usage.OutputTokens)
	if s.CostUSD > 0 {
		fmt.Fprintf(w, "cost: %s USD\n", formatUSD(s.CostUSD))
	}
	if s.Compactions > 0 {
		fmt.Fprintf(w, "compactions: %d\n", s.Compactions)
	}
	if b := s.Budget; b != nil {
		var limits []string
		if b.MaxTokens > 0 {
			limits = append(limits, fmt.Sprintf("%d tokens", b.MaxTokens))
		}
		if b.MaxCostUSD > 0 {
			limits = append(limits, formatUSD(b.MaxCostUSD)+" USD")
		}
		line := "budget: " + strings.Join(limits, ", ")
		if s.BudgetExceeded != "" {
			line += fmt.Sprintf(" (spent: %s)", s.BudgetExceeded)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "last: seq %d %s\n", s.LastSeq, s.LastType)
}

func renderDiagnostics(w io.Writer, d *Diagnostics) {
	fmt.Fprintf(w, "events: %d", d.Events)
	if d.Invalid > 0 {
		fmt.Fprintf(w, " (%d invalid)", d.Invalid)
	}
	fmt.Fprintln(w)
	types := make([]string, 0, len(d.ByType))
	for t := range d.ByType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		fmt.Fprintf(w, "  %s: %d\n", t, d.ByType[t])
	}
	fmt.Fprintf(w, "llm calls: %d, failures: %d, retries: %d\n", d.LLMCalls, d.LLMFailures, d.Retries)
	if len(d.LLMFailuresByType) > 0 {
		kinds := make([]string, 0, len(d.LLMFailuresByType))
		for k := range d.LLMFailuresByType {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "  failed %s: %d\n", k, d.LLMFailuresByType[k])
		}
	}
	if d.RetryWaitMS > 0 {
		fmt.Fprintf(w, "  waited before retries: %d ms\n", d.RetryWaitMS)
	}
	if a := d.Approvals; a != (ApprovalCounts{}) {
		fmt.Fprintf(w, "approvals: requested %d, approved %d (remembered %d), denied %d (timed out %d)\n", a.Requested, a.Approved, a.Remembered, a.Denied, a.TimedOut)
	}
	fmt.Fprintf(w, "tool calls: %d, failures: %d, timeouts: %d, cancelled: %d, interrupted: %d\n", d.ToolCalls, d.ToolFailures, d.ToolTimeouts, d.ToolCancelled, d.Interrupted)
	fmt.Fprintf(w, "tokens: in %d, out %d\n", d.Usage.InputTokens, d.Usage.OutputTokens)
	models := make([]string, 0, len(d.UsageByModel))
	for m := range d.UsageByModel {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		u := d.UsageByModel[m]
		line := fmt.Sprintf("  %s: in %d, out %d", m, u.InputTokens, u.OutputTokens)
		if c, ok := d.CostByModel[m]; ok {
			line += fmt.Sprintf(", %s USD", formatUSD(c))
		}
		fmt.Fprintln(w, line)
	}
	if d.CostUSD > 0 {
		fmt.Fprintf(w, "cost: %s USD\n", formatUSD(d.CostUSD))
	}
	fmt.Fprintf(w, "llm latency ms: count %d, total %d, max %d\n", d.LLMLatency.Count, d.LLMLatency.TotalMS, d.LLMLatency.MaxMS)
	fmt.Fprintf(w, "tool duration ms: count %d, total %d, max %d\n", d.ToolDuration.Count, d.ToolDuration.TotalMS, d.ToolDuration.MaxMS)
	for _, e := range d.Errors {
		call := ""
		if e.CallID != "" {
			call = " " + e.CallID
		}
		fmt.Fprintf(w, "error at seq %d %s%s: %s: %s\n", e.Seq, e.Type, call, e.Error.Type, e.Error.Message)
	}
}

// formatUSD writes an amount of USD with the digits it has and no more.
func formatUSD(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

package assistant

import (
	"context"
	"fmt"
	"strings"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// Error types of conversation.compaction.failed besides the provider's
// and conversation.ReasonInterrupted, ReasonCancelled.
const reasonNothingToCompact = "nothing_to_compact"

// transcriptCut is the most bytes of one message a summary request
// carries: a tool's long output is what makes a context big, and the
// model needs its gist, not all of it.
const transcriptCut = 4000

// window is the context window of the model s asks for: its provider's,
// as the operator configured it, else the node's default.
func (a *Assistant) window(s LLMSettings) int64 {
	if e, ok := a.endpoints[strings.ToLower(strings.TrimSpace(s.Provider))]; ok {
		if w, ok := e.Window(s.Model); ok {
			return w
		}
	}
	if a.cfg.ContextWindow > 0 {
		return a.cfg.ContextWindow
	}
	return llm.DefaultWindow
}

// contextData adds to an llm.requested's data the model's window, the
// estimate of the context sent and the messages the last-resort guard
// has dropped: the loop decides compaction from them, and the timeline
// shows a drop.
func (a *Assistant) contextData(data map[string]any, key string, s LLMSettings) {
	data["window"] = a.window(s)
	h, err := a.ctxs.get(key)
	if err != nil {
		return // the call's own read of the context fails and says why
	}
	tokens := 0
	for i := range h.msgs {
		tokens += h.msgs[i].Tokens
	}
	data["context_tokens"] = tokens
	if h.dropped > 0 {
		data["context_dropped"] = h.dropped
	}
}

// execCompact asks the model for a summary of the conversation's older
// messages on its own goroutine and records conversation.compacted, or
// conversation.compaction.failed: the loop's turn goes on either way.
func (a *Assistant) execCompact(_ context.Context, d agents.Directive, x *runtime.ExecContext) (runtime.ExecResult, error) {
	c := d.(conversation.Compact)
	if x.Recovered {
		// Found again after a crash: the summary, if any, was never
		// recorded. The turn goes on uncompacted; the next call compacts
		// again if the context still nears the window.
		a.compactFailed(x, c, conversation.ReasonInterrupted, "the compaction %s did not finish: the node stopped", c.Request)
		return runtime.ExecResult{}, nil
	}
	a.start(c.Conversation, c.Request, func(ctx context.Context) { a.compact(ctx, x, c) })
	return runtime.ExecResult{Kind: runtime.ExecAsync}, nil
}

// compact makes the summary call and records its outcome.
func (a *Assistant) compact(ctx context.Context, x *runtime.ExecContext, c conversation.Compact) {
	settings, root, err := a.cfg.Host.Settings(ctx, projectOf(c.Conversation))
	if err != nil {
		a.compactError(ctx, x, c, &llm.Error{Kind: llm.KindConfig, Message: bus.AsError(err).Message})
		return
	}
	s := settings.LLM.merge(c.LLM)
	h, err := a.ctxs.get(c.Conversation)
	if err != nil {
		a.compactError(ctx, x, c, &llm.Error{Kind: llm.KindConfig, Message: fmt.Sprintf("read the context of %s: %v", c.Conversation, err)})
		return
	}
	plan, ok := planCompaction(h.list, c.KeepTokens)
	if !ok {
		a.compactFailed(x, c, reasonNothingToCompact, "nothing to compact: the context is the task, a summary and the last turn (%d tokens estimated)", h.tokens)
		return
	}
	p, err := a.provider(s, root)
	if err != nil {
		a.compactError(ctx, x, c, llm.Classify(err))
		return
	}
	req := llm.Request{Model: s.Model, System: c.Instruction, Temperature: s.Temperature, MaxTokens: s.MaxTokens, Summary: true,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: transcript(plan.replaced)}}}
	resp, err := p.Complete(ctx, req, nil)
	if err != nil {
		a.compactError(ctx, x, c, llm.Classify(err))
		return
	}
	text := strings.TrimSpace(resp.Text)
	if text == "" {
		a.compactFailed(x, c, reasonEmptyAnswer, "the model (%s) answered the summary request with no text", s.Model)
		return
	}
	if room := a.room(); room >= 0 && len(text) > room {
		text = cut(text, room)
	}
	sum := views.Message{Role: views.RoleUser, Content: fmt.Sprintf(views.SummaryHeading, len(plan.replaced), plan.answers) + text}
	after := h.tokens - plan.tokens + views.EstimateTokens(&sum)
	model := resp.Model
	if model == "" {
		model = s.Model
	}
	data := map[string]any{
		"summary":       text,
		"replaces":      conversation.CompactRange{FromSeq: plan.from, ToSeq: plan.to, Messages: len(plan.replaced), Answers: plan.answers},
		"tokens_before": h.tokens, "tokens_after": after,
		"model": model, "reason": c.Reason,
		"usage": conversation.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens},
	}
	cost, priced := a.cost(s, resp)
	if priced {
		data["cost_usd"] = cost
	}
	if a.deliver(x, conversation.Compacted, c.Request+".done", c.Request, data) && a.cfg.Spent != nil {
		a.cfg.Spent(projectOf(c.Conversation), model, resp.Usage, cost, priced)
	}
}

// compactError records a failed summary call: cancelled with its turn,
// nothing at all when the node is closing (its restart records the
// compaction interrupted).
func (a *Assistant) compactError(ctx context.Context, x *runtime.ExecContext, c conversation.Compact, e *llm.Error) {
	if ctx.Err() != nil {
		if cancelledByTurn(ctx) {
			a.compactFailed(x, c, conversation.ReasonCancelled, "the turn was cancelled while the model summarised")
		}
		return
	}
	a.compactFailed(x, c, e.Kind, "the summary call failed: %s", e.Message)
}

// compactFailed records conversation.compaction.failed.
func (a *Assistant) compactFailed(x *runtime.ExecContext, c conversation.Compact, typ, format string, args ...any) {
	a.deliver(x, conversation.CompactionFailed, c.Request+".failed", c.Request, map[string]any{"error": bus.Errorf(typ, format, args...), "reason": c.Reason})
}

// compaction is what a compaction replaces: messages from..to of the
// list, tokens their estimate.
type compaction struct {
	replaced []views.Message
	from, to uint64
	tokens   int
	// answers counts the assistant's messages replaced, an earlier
	// summary's included.
	answers int
}

// planCompaction chooses what to replace in list (llm_context's
// messages): everything after the system message and the task (a
// summary included) up to a cut that keeps at least keep tokens of the
// most recent messages — the last turn at least —, falls before a user
// or assistant message, and splits no tool call from its result. False
// when nothing but a summary could be replaced.
func planCompaction(list []views.Message, keep int64) (compaction, bool) {
	start := 0
	for start < len(list) && (list[start].Role == views.RoleSystem || list[start].Pin == views.PinTask) {
		start++
	}
	// The last turn is kept whole: from the last user message on, when
	// it is not the task (one long turn keeps its last messages).
	last := len(list) - 1
	for i := len(list) - 1; i > start; i-- {
		if list[i].Role == views.RoleUser && list[i].Pin == "" {
			last = i
			break
		}
	}
	kept := int64(0)
	for k := len(list) - 1; k > start; k-- {
		kept += int64(list[k].Tokens)
		if k > last || kept < keep || !cutsCleanly(list, start, k) {
			continue
		}
		c := compaction{replaced: list[start:k], from: list[start].Seq}
		for _, m := range c.replaced {
			c.to = max(c.to, m.Seq)
			c.tokens += m.Tokens
			switch {
			case m.Role == views.RoleAssistant:
				c.answers++
			case m.Pin == views.PinSummary:
				c.answers += views.SummaryAnswers(m.Content)
			}
		}
		if len(c.replaced) == 1 && c.replaced[0].Pin == views.PinSummary {
			return compaction{}, false
		}
		return c, true
	}
	return compaction{}, false
}

// cutsCleanly reports whether list may be cut before k: a user or
// assistant message begins there, no result after the cut answers a call
// before it, and every message kept comes after every message replaced
// in the log (llm_context replaces by stream sequence).
func cutsCleanly(list []views.Message, start, k int) bool {
	if r := list[k].Role; r != views.RoleUser && r != views.RoleAssistant {
		return false
	}
	calls := map[string]bool{}
	var to uint64
	for _, m := range list[start:k] {
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
		to = max(to, m.Seq)
	}
	for _, m := range list[k:] {
		if m.Seq <= to || (m.Role == views.RoleTool && calls[m.ToolCallID]) {
			return false
		}
	}
	return true
}

// transcript writes the messages a summary replaces as text for the
// model: a provider would refuse tool calls and results in a request
// that offers no tools.
func transcript(msgs []views.Message) string {
	var b strings.Builder
	b.WriteString("Transcript of the conversation to summarise:\n")
	for _, m := range msgs {
		content := m.Content
		if len(content) > transcriptCut {
			content = cut(content, transcriptCut) + fmt.Sprintf(" […%d more bytes]", len(m.Content)-transcriptCut)
		}
		switch {
		case m.Pin == views.PinSummary:
			fmt.Fprintf(&b, "\nEarlier summary:\n%s\n", content)
		case m.Role == views.RoleTool:
			fmt.Fprintf(&b, "\nResult of call %s:\n%s\n", m.ToolCallID, content)
		default:
			role := "User"
			if m.Role == views.RoleAssistant {
				role = "Assistant"
			}
			if content != "" {
				fmt.Fprintf(&b, "\n%s:\n%s\n", role, content)
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Args)
				if tc.ArgsText != "" {
					args = tc.ArgsText
				}
				fmt.Fprintf(&b, "\nAssistant called %s (call %s) with %s\n", tc.Name, tc.ID, cut(args, transcriptCut))
			}
		}
	}
	return b.String()
}

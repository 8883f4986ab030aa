package assistant

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// execLLMCall makes the call on its own goroutine and returns async: the
// request (conversation.llm.requested) and the answer come back as
// events. Nothing here waits on the project (whose engine may still be
// starting when recovery runs this again), so the agent's queue never
// blocks.
func (a *Assistant) execLLMCall(_ context.Context, d agents.Directive, x *runtime.ExecContext) (runtime.ExecResult, error) {
	c := d.(conversation.LLMCall)
	if x.Recovered {
		// Found again after a crash: whether the call was made and how far
		// it got is unknown, so it is closed as interrupted, with the id
		// the node's resume gives the same interruption (the log keeps
		// one), and the loop makes the call again.
		a.deliver(x, conversation.LLMFailed, "interrupted."+c.Request, c.Request, map[string]any{
			"error":   bus.Errorf(conversation.ReasonInterrupted, "LLM call %s did not finish: the node stopped", c.Request),
			"attempt": c.Attempt,
		})
		return runtime.ExecResult{}, nil
	}
	a.start(c.Conversation, c.Request, func(ctx context.Context) {
		settings, root, err := a.cfg.Host.Settings(ctx, projectOf(c.Conversation))
		s := settings.LLM.merge(c.LLM)
		// Recorded once the settings are known, so that it names the
		// model and provider; a crash before it commits is closed by the
		// restart all the same (the loop's state holds the request).
		data := requestedData(s, c, settings.InstructionFiles)
		a.contextData(data, c.Conversation, s)
		a.deliver(x, conversation.LLMRequested, c.Request, x.Input.ID(), data)
		if err != nil {
			if ctx.Err() != nil {
				a.stopped(ctx, x, c, 0)
				return
			}
			a.llmFailed(x, c, 0, &llm.Error{Kind: llm.KindConfig, Message: bus.AsError(err).Message})
			return
		}
		a.complete(ctx, x, c, s, settings.Instructions, root)
	})
	return runtime.ExecResult{Kind: runtime.ExecAsync}, nil
}

// requestedData is conversation.llm.requested's data: the model, the
// attempt, the step and the instruction files read. A provider is
// named only when the settings name one: a project without a model still
// records its request (then the failure saying what to set), never an
// event its own schema refuses (provider is at least one character),
// which the runtime dead-letters as invalid_event.
func requestedData(s LLMSettings, c conversation.LLMCall, instructions []string) map[string]any {
	data := map[string]any{"model": s.Model, "attempt": c.Attempt, "step": c.Step}
	if s.Provider != "" {
		data["provider"] = s.Provider
	}
	if len(instructions) > 0 {
		data["instructions"] = instructions
	}
	return data
}

// complete makes one attempt and records its outcome.
func (a *Assistant) complete(ctx context.Context, x *runtime.ExecContext, c conversation.LLMCall, s LLMSettings, instructions, root string) {
	if c.DelayMS > 0 {
		t := time.NewTimer(time.Duration(c.DelayMS) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			a.stopped(ctx, x, c, 0)
			return
		}
	}
	start := time.Now()
	req, names, h, err := a.request(ctx, c.Conversation, s, instructions, c.Tools)
	if err != nil {
		a.llmFailed(x, c, 0, llm.Classify(err))
		return
	}
	p, err := a.provider(s, root)
	if err != nil {
		a.llmFailed(x, c, 0, llm.Classify(err))
		return
	}
	index := 0
	resp, err := p.Complete(ctx, req, func(dl llm.Delta) {
		if dl.Text == "" || a.cfg.Publish == nil {
			return
		}
		sig, err := newEvent(c.Conversation, conversation.AssistantDelta, fmt.Sprintf("%s.delta.%d", c.Request, index), c.Request, map[string]any{"text": dl.Text, "index": index})
		index++
		if err == nil {
			err = a.cfg.Publish(c.Conversation, sig)
		}
		if err != nil {
			a.log.Debug("publish an assistant delta", "conversation", c.Conversation, "err", err)
		}
	})
	latency := time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			a.stopped(ctx, x, c, latency)
			return
		}
		a.llmFailed(x, c, latency, refusal(llm.Classify(err), c, h))
		return
	}
	if resp.Text == "" && len(resp.ToolCalls) == 0 {
		// Nothing to show and nothing to do: recorded as a failed attempt
		// (retried), never as an empty message, which some providers
		// refuse in the context of the next call.
		a.llmFailed(x, c, latency, &llm.Error{Kind: reasonEmptyAnswer, Message: fmt.Sprintf("the model (%s) answered with neither text nor tool calls (stop reason %q)", s.Model, resp.StopReason)})
		return
	}
	a.answered(x, c, s, resp, names, h.used, latency)
}

// refusal adds to a refused request (a 4xx other than the key's) what the
// conversation can do about it. Every call sends the whole history, so a
// history the server refuses — a message it cannot take — fails every
// later turn the same way; a fork that leaves the turn out goes on
// without it.
func refusal(e *llm.Error, c conversation.LLMCall, h history) *llm.Error {
	if e.Kind != llm.KindBadRequest || e.Status == 0 {
		return e
	}
	at := "SEQ"
	if n := h.before(turnOf(c.Request)); n > 0 {
		at = fmt.Sprint(n)
	}
	r := *e
	r.Message = fmt.Sprintf("%s. Every call sends the conversation's whole history: if it is the history the server refuses (a message it names above), every later turn fails the same way; go on without this turn in a fork, jido-bus conv fork %s --at %s (or at a seq before the message it names: conv show %s lists them)", strings.TrimSuffix(e.Message, "."), c.Conversation, at, c.Conversation)
	return &r
}

// turnOf is the user message id of an LLM request id, llm.<turn>.<step>.<attempt>.
func turnOf(request string) string {
	t := strings.TrimPrefix(request, "llm.")
	for range 2 {
		if i := strings.LastIndexByte(t, '.'); i >= 0 {
			t = t[:i]
		}
	}
	return t
}

// reasonEmptyAnswer is the error type of an answer with neither text nor
// tool calls; it is retried like a broken stream.
const reasonEmptyAnswer = "empty_answer"

// request builds the provider's request: the system message (the
// project's instructions, then the conversation's system prompt), the
// conversation's llm_context and the project's tools under their API
// names (names maps them back).
func (a *Assistant) request(ctx context.Context, key string, s LLMSettings, instructions string, only *[]string) (llm.Request, map[string]string, history, error) {
	h, err := a.ctxs.get(key)
	if err != nil {
		return llm.Request{}, nil, h, fmt.Errorf("read the context of %s: %w", key, err)
	}
	specs, err := a.cfg.Host.Tools(ctx, projectOf(key))
	if err != nil {
		return llm.Request{}, nil, h, fmt.Errorf("the tools of project %s: %w", projectOf(key), err)
	}
	req := llm.Request{Model: s.Model, Temperature: s.Temperature, MaxTokens: s.MaxTokens}
	names := make(map[string]string, len(specs))
	apiName := make(map[string]string, len(specs))
	for _, sp := range specs {
		if only != nil && !slices.Contains(*only, sp.Name) {
			continue // a delegated conversation is offered its parent's choice
		}
		names[sp.APIName] = sp.Name
		apiName[sp.Name] = sp.APIName
		req.Tools = append(req.Tools, llm.Tool{Name: sp.APIName, Description: sp.Description, InputSchema: sp.InputSchema})
	}
	req.System = instructions
	for _, m := range h.msgs {
		if m.Role == views.RoleSystem {
			req.System = strings.TrimSpace(req.System + "\n\n" + m.Content)
			continue
		}
		lm := llm.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			name := tc.Name
			if renamed, old := assets.RenamedTool(name); old {
				name = renamed // a call logged before asset tools were renamed
			}
			if n, ok := apiName[name]; ok {
				name = n
			}
			args := string(rawArgs(tc.Args))
			if tc.ArgsText != "" {
				// Arguments that were not JSON go back as the model sent
				// them (a provider that takes an object gives {}): it reads
				// its own text beside the error of the call's result.
				args = tc.ArgsText
			}
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: name, Args: args})
		}
		req.Messages = append(req.Messages, lm)
	}
	return req, names, h, nil
}

// answered records a complete answer: the message, its tool calls, then
// conversation.llm.completed, which the loop acts on.
func (a *Assistant) answered(x *runtime.ExecContext, c conversation.LLMCall, s LLMSettings, resp llm.Response, names map[string]string, usedBefore func(string) bool, latency time.Duration) {
	mine := map[string]bool{} // the ids given in this answer
	used := func(id string) bool { return mine[id] || usedBefore(id) }
	room := a.room()
	text := resp.Text
	if room >= 0 && len(text) > room {
		text = cut(text, room) + fmt.Sprintf("\n[cut: the answer was %d bytes, over the %d an event may hold]", len(resp.Text), room)
	}
	a.deliver(x, conversation.AssistantMessage, c.Request+".message", c.Request, map[string]any{"text": text, "tool_calls": len(resp.ToolCalls)})
	for i, tc := range resp.ToolCalls {
		id := callID(tc.ID, c.Request, i+1, used)
		mine[id] = true
		name := tc.Name
		if n, ok := names[name]; ok {
			name = n
		}
		data := map[string]any{"call_id": id, "name": name}
		switch args := []byte(tc.Args); {
		case room >= 0 && len(args) > room:
			data["args_error"] = fmt.Sprintf("the arguments are %d bytes, over the %d an event may hold; write the content in smaller pieces", len(args), room)
		case len(args) == 0:
			data["args"] = json.RawMessage("{}")
		case json.Valid(args):
			data["args"] = json.RawMessage(args)
		default:
			var probe any
			err := json.Unmarshal(args, &probe)
			data["args_error"] = err.Error()
			data["args_text"] = tc.Args
		}
		a.deliver(x, conversation.ToolRequested, fmt.Sprintf("%s.call.%d", c.Request, i+1), c.Request, data)
	}
	model := resp.Model
	if model == "" {
		model = s.Model
	}
	data := map[string]any{
		"model": model, "stop_reason": resp.StopReason, "latency_ms": latency.Milliseconds(), "tool_calls": len(resp.ToolCalls),
		"usage": conversation.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens},
	}
	cost, priced := a.cost(s, resp)
	if priced {
		data["cost_usd"] = cost
	}
	if a.deliver(x, conversation.LLMCompleted, c.Request+".completed", c.Request, data) && a.cfg.Spent != nil {
		a.cfg.Spent(projectOf(c.Conversation), model, resp.Usage, cost, priced)
	}
}

// cost is what the answer cost by its provider's price table, as its
// operator configured it: the price of the model asked for, else of the
// model the provider says answered. The event records it, so that a
// replay or a read model never needs the table.
func (a *Assistant) cost(s LLMSettings, resp llm.Response) (float64, bool) {
	e, ok := a.endpoints[s.Provider]
	if !ok {
		return 0, false
	}
	if usd, ok := e.Cost(s.Model, resp.Usage); ok {
		return usd, true
	}
	return e.Cost(resp.Model, resp.Usage)
}

// llmFailed records a failed attempt, with the delay before the next one
// when the loop will retry it. The last attempt is not retryable: the loop
// gives up on it, and its error says so.
func (a *Assistant) llmFailed(x *runtime.ExecContext, c conversation.LLMCall, latency time.Duration, e *llm.Error) {
	again := retryable(e) && c.Attempt < conversation.MaxAttempts
	msg := e.Message
	if retryable(e) && !again {
		msg = fmt.Sprintf("%s (given up after %d attempts)", msg, c.Attempt)
	}
	data := map[string]any{
		"error":      bus.Errorf(e.Kind, "%s", msg),
		"retryable":  again,
		"attempt":    c.Attempt,
		"latency_ms": latency.Milliseconds(),
	}
	if e.Status != 0 {
		data["status"] = e.Status
	}
	if again {
		data["retry_in_ms"] = a.cfg.Backoff(c.Attempt, e.RetryAfter).Milliseconds()
	}
	a.deliver(x, conversation.LLMFailed, c.Request+".failed", c.Request, data)
}

// stopped handles an attempt whose context ended: a cancelled turn is
// recorded; a closing node records nothing (the restart records the call
// interrupted and makes it again).
func (a *Assistant) stopped(ctx context.Context, x *runtime.ExecContext, c conversation.LLMCall, latency time.Duration) {
	if !cancelledByTurn(ctx) {
		return
	}
	a.llmFailed(x, c, latency, &llm.Error{Kind: conversation.ReasonCancelled, Message: "the turn was cancelled while the model answered"})
}

// retryable reports whether another attempt may succeed.
func retryable(e *llm.Error) bool { return e.Retryable() || e.Kind == reasonEmptyAnswer }

// room is the most bytes of model text one event carries: the log's data
// limit less what the rest of the event's data takes (negative: no limit).
func (a *Assistant) room() int {
	limit := a.cfg.Limits.DataLimit()
	if limit < 0 {
		return -1
	}
	return max(limit-4096, 0)
}

// cut returns s cut to at most n bytes, on a UTF-8 boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// callID is the id a tool call is known by: the model's own when it is a
// plain word the conversation has not used yet, else one derived from the
// request and the call's place in the answer. A model may leave it out,
// repeat one from an earlier step (local servers do) or send any text;
// a repeated id would make the call's events duplicates the log drops and
// leave the turn waiting for ever.
func callID(model, request string, i int, used func(string) bool) string {
	if validCallID(model) && !used(model) {
		return model
	}
	sum := sha256.Sum256([]byte(request))
	for n := 0; ; n++ {
		id := fmt.Sprintf("call_%x_%d", sum[:8], i+n*1000)
		if !used(id) {
			return id
		}
	}
}

// validCallID reports whether id suits every provider's API: 1–64 of
// [A-Za-z0-9_-].
func validCallID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

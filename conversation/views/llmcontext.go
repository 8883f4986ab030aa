package views

import (
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projections"
)

// LLMContextOptions bound the llm_context read model. They are part of its
// version, so changing them rebuilds it.
type LLMContextOptions struct {
	// MaxMessages is the most messages kept besides the system message.
	// Zero means 2,000.
	MaxMessages int
	// MaxTokens is the most estimated tokens kept (see EstimateTokens),
	// system message included. Zero means 1,000,000.
	//
	// Both are a last-resort guard: compaction (conversation.compacted)
	// keeps the context within the model's window long before, so they
	// are set above any model's window, and what they drop is counted
	// (Dropped) and shown.
	MaxTokens int
}

func (o LLMContextOptions) maxMessages() int { return cmpOr(o.MaxMessages, 2000) }
func (o LLMContextOptions) maxTokens() int   { return cmpOr(o.MaxTokens, 1_000_000) }

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// LLMContext is the message list the next LLM call of a conversation needs:
// the system message, then user, assistant, tool-call and tool-result
// messages, trimmed from the oldest to the window and the token budget.
// A trimmed assistant message takes its tool results with it, so the list
// never holds a tool result whose call is gone.
//
// The list is in the order providers require, not always the log's: a
// user message that arrives while the calls of the last assistant message
// wait for their results (a call waiting for a person's approval, a long
// command) is Held and joins the list after the results, since
// OpenAI-compatible servers refuse a user message between an assistant's
// tool calls and their results, and Anthropic's API too. Request gives
// the messages an LLM call sends, in that order whatever the log holds.
type LLMContext struct {
	Messages []Message `json:"messages"`
	// Tokens is the estimate for Messages.
	Tokens int `json:"tokens"`
	// Dropped counts messages the last-resort guard trimmed away
	// (MaxMessages, MaxTokens): compaction normally keeps the context
	// well within them, so a count here says it did not keep up. Each
	// LLM call records the count so far (llm.requested's
	// context_dropped), and the timeline shows it.
	Dropped int `json:"dropped"`
	// Compacted counts the messages summaries replaced
	// (conversation.compacted).
	Compacted int `json:"compacted,omitempty"`
	// Early holds tool results that arrived before their call; each joins
	// the list right after its call, since providers require that order.
	Early []Message `json:"early,omitempty"`
	// Held are user messages waiting for the results of the last
	// assistant message's tool calls, in the order they came.
	Held []Message `json:"held,omitempty"`
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of an LLM call.
type Message struct {
	Role       string        `json:"role"`
	Content    string        `json:"content"`
	ToolCalls  []MessageCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	// Request is, on an assistant message, the id of the
	// conversation.llm.requested it answers: its text and tool calls are
	// one message whichever order they are logged in.
	Request string `json:"request,omitempty"`
	Seq     uint64 `json:"seq"`
	Tokens  int    `json:"tokens"`
	// Pin marks the messages that stay at the head of the list, never
	// trimmed: PinTask, the first user message (the conversation's
	// task), and PinSummary, the summary of the messages a compaction
	// replaced (its Seq is the last of them).
	Pin string `json:"pin,omitempty"`
}

// Pins of a message.
const (
	PinTask    = "task"
	PinSummary = "summary"
)

// SummaryHeading introduces a summary in the context the model reads:
// how many messages it replaces, and how many of them were the
// assistant's answers.
const SummaryHeading = "[Summary of the earlier conversation, written when it was compacted; it replaces %d messages, %d of them the assistant's]\n"

// SummaryAnswers reads the count of the assistant's answers from a
// summary message's heading (0 when content has none).
func SummaryAnswers(content string) int {
	var n, answers int
	if _, err := fmt.Sscanf(content, SummaryHeading, &n, &answers); err != nil {
		return 0
	}
	return answers
}

// MessageCall is a tool call an assistant message makes. When the model's
// arguments were not JSON, Args is {} and ArgsText holds them as the model
// sent them: a provider that takes arguments as text (OpenAI's) gives the
// model its own text back, the others {}; the call's result (a
// conversation.tool.failed) says what was wrong with them.
type MessageCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsText string          `json:"args_text,omitempty"`
}

// EstimateTokens is the budget's estimate: four bytes a token, plus four
// for the message's framing. It is deliberately crude and cheap; the
// provider's own count arrives in conversation.llm.completed.
func EstimateTokens(m *Message) int {
	n := len(m.Content) + len(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Args) + len(c.ArgsText)
	}
	return (n+3)/4 + 4
}

// LLMContextProjection folds conversation events into an LLMContext.
type LLMContextProjection struct {
	Options LLMContextOptions
}

func (LLMContextProjection) Name() string                   { return ViewLLMContext }
func (LLMContextProjection) Selector() projections.Selector { return selector }
func (LLMContextProjection) Init() *LLMContext              { return &LLMContext{Messages: []Message{}} }
func (p LLMContextProjection) Version() string {
	// 3: user messages held until the results of the calls they
	// interrupted are in.
	// 4: the first user message pinned; conversation.compacted.
	return fmt.Sprintf("4+messages=%d,tokens=%d", p.Options.maxMessages(), p.Options.maxTokens())
}

// Apply implements projections.Projection.
func (p LLMContextProjection) Apply(c *LLMContext, e *projections.Entry) *LLMContext {
	ev := decoded.Of(e)
	if ev.Invalid != "" {
		return c
	}
	d := &ev.Data
	var m Message
	switch ev.Type {
	case conversation.Started:
		if d.System == "" {
			return c
		}
		m = Message{Role: RoleSystem, Content: d.System}
	case conversation.Compacted:
		if d.Replaces != nil && d.Summary != "" {
			p.compact(c, d)
		}
		return c
	case conversation.UserMessage:
		m = Message{Role: RoleUser, Content: d.Text, Seq: ev.Seq}
		if c.first() == len(c.Messages) && !c.hasTask() {
			m.Pin = PinTask
		}
		if c.awaiting() {
			m.Tokens = EstimateTokens(&m)
			c.Held = append(c.Held, m)
			return c
		}
	case conversation.AssistantMessage:
		// The answer's tool calls were logged first: the text joins them.
		if i := c.answerOf(ev.CausationID); i >= 0 {
			if last := &c.Messages[i]; d.Text != "" && last.Content == "" {
				c.Tokens -= last.Tokens
				last.Content = d.Text
				last.Tokens = EstimateTokens(last)
				c.Tokens += last.Tokens
				p.trim(c)
			}
			return c
		}
		// A new answer: what was said before it precedes it, answered or
		// not (Request closes calls left without a result).
		p.release(c)
		m = Message{Role: RoleAssistant, Content: d.Text, Request: ev.CausationID}
	case conversation.ToolRequested:
		call := MessageCall{ID: d.CallID, Name: d.Name, Args: d.Args}
		if d.ArgsError != "" || len(d.Args) == 0 {
			call.Args, call.ArgsText = json.RawMessage(`{}`), d.ArgsText
		}
		// The calls of one turn belong to the assistant message that ends
		// the list, as providers expect.
		if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == RoleAssistant {
			last := &c.Messages[n-1]
			c.Tokens -= last.Tokens
			last.ToolCalls = append(last.ToolCalls, call)
			last.Tokens = EstimateTokens(last)
			c.Tokens += last.Tokens
		} else {
			p.release(c)
			m = Message{Role: RoleAssistant, ToolCalls: []MessageCall{call}, Request: ev.CausationID, Seq: ev.Seq}
			p.add(c, m)
		}
		for i := range c.Early {
			if c.Early[i].ToolCallID == d.CallID {
				early := c.Early[i]
				c.Early = append(c.Early[:i], c.Early[i+1:]...)
				p.add(c, early)
				break
			}
		}
		if !c.awaiting() {
			p.release(c)
		}
		return c
	case conversation.ToolCompleted:
		m = Message{Role: RoleTool, ToolCallID: d.CallID, Content: toolOutput(d)}
	case conversation.ToolFailed:
		msg := "failed"
		if d.Error != nil {
			msg = fmt.Sprintf("error %s: %s", d.Error.Type, d.Error.Message)
		}
		m = Message{Role: RoleTool, ToolCallID: d.CallID, Content: msg}
	case conversation.ToolCancelled:
		m = Message{Role: RoleTool, ToolCallID: d.CallID, Content: "cancelled: " + d.Reason}
	case conversation.ToolTimeout:
		m = Message{Role: RoleTool, ToolCallID: d.CallID, Content: fmt.Sprintf("timed out after %d ms", d.TimeoutMS)}
	default:
		return c
	}
	m.Seq = ev.Seq
	if m.Role == RoleTool && !c.hasCall(m.ToolCallID) {
		if len(c.Early) < maxEarly {
			m.Tokens = EstimateTokens(&m)
			c.Early = append(c.Early, m)
		}
		return c
	}
	p.add(c, m)
	if m.Role == RoleTool && !c.awaiting() {
		p.release(c)
	}
	return c
}

// awaiting reports whether the last assistant message has tool calls
// without a result after it.
func (c *LLMContext) awaiting() bool {
	answered := map[string]bool{}
	for i := len(c.Messages) - 1; i >= 0; i-- {
		m := &c.Messages[i]
		if m.Role == RoleTool {
			answered[m.ToolCallID] = true
			continue
		}
		for _, tc := range m.ToolCalls {
			if !answered[tc.ID] {
				return true
			}
		}
		return false
	}
	return false
}

// release adds the held user messages to the list.
func (p LLMContextProjection) release(c *LLMContext) {
	held := c.Held
	c.Held = nil
	for _, m := range held {
		p.add(c, m)
	}
}

// add appends m and trims.
func (p LLMContextProjection) add(c *LLMContext, m Message) {
	m.Tokens = EstimateTokens(&m)
	c.Messages = append(c.Messages, m)
	c.Tokens += m.Tokens
	p.trim(c)
}

// answerOf returns the index of the assistant message that holds the tool
// calls of LLM request id, if it is the last message but for tool
// results, or -1.
func (c *LLMContext) answerOf(request string) int {
	if request == "" {
		return -1
	}
	for i := len(c.Messages) - 1; i >= 0; i-- {
		switch m := &c.Messages[i]; {
		case m.Role == RoleTool:
			continue
		case m.Role == RoleAssistant && m.Request == request && len(m.ToolCalls) > 0:
			return i
		}
		return -1
	}
	return -1
}

// hasCall reports whether an assistant message in the list makes call id.
// It searches from the end, where the calls being answered are.
func (c *LLMContext) hasCall(id string) bool {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		for _, tc := range c.Messages[i].ToolCalls {
			if tc.ID == id {
				return true
			}
		}
	}
	return false
}

// toolOutput is the content of a tool result message: the output as JSON
// text, or for an artifact its reference and preview, which keeps the
// context small.
func toolOutput(d *conversation.Data) string {
	if r := d.OutputRef; r != nil {
		return fmt.Sprintf("[output of %d bytes stored as artifact %s; preview follows]\n%s", r.Size, r.ID, r.Preview)
	}
	// A plain string output reads better unquoted.
	if s, ok := conversation.UnquoteString(d.Output); ok {
		return s
	}
	var s string
	if json.Unmarshal(d.Output, &s) == nil {
		return s
	}
	return string(d.Output)
}

// first is the index of the first message that is neither the system
// message nor pinned: where trimming and compaction begin.
func (c *LLMContext) first() int {
	i := 0
	for i < len(c.Messages) && (c.Messages[i].Role == RoleSystem || c.Messages[i].Pin != "") {
		i++
	}
	return i
}

// hasTask reports whether the list holds the conversation's task.
func (c *LLMContext) hasTask() bool {
	for i := range c.Messages {
		if c.Messages[i].Pin == PinTask {
			return true
		}
	}
	return false
}

// compact replaces every message up to d.Replaces.ToSeq but the system
// message and the task — a summary before included — with d.Summary,
// and the results of the calls it replaced with them, so that no tool
// result is left without its call.
func (p LLMContextProjection) compact(c *LLMContext, d *conversation.Data) {
	to := d.Replaces.ToSeq
	gone := map[string]bool{}
	out := make([]Message, 0, len(c.Messages))
	at, n := -1, 0
	for _, m := range c.Messages {
		replaced := m.Role != RoleSystem && m.Pin != PinTask && m.Seq <= to
		if m.Role == RoleTool && gone[m.ToolCallID] {
			replaced = true
		}
		if !replaced {
			out = append(out, m)
			continue
		}
		for _, tc := range m.ToolCalls {
			gone[tc.ID] = true
		}
		if at < 0 {
			at = len(out)
		}
		n++
	}
	if at < 0 {
		return
	}
	sum := Message{Role: RoleUser, Content: fmt.Sprintf(SummaryHeading, d.Replaces.Messages, d.Replaces.Answers) + d.Summary, Seq: to, Pin: PinSummary}
	sum.Tokens = EstimateTokens(&sum)
	out = append(out[:at], append([]Message{sum}, out[at:]...)...)
	c.Messages = out
	c.Compacted += n
	c.Tokens = 0
	for i := range c.Messages {
		c.Tokens += c.Messages[i].Tokens
	}
}

// trim drops the oldest messages (never the system message, the task or
// a summary) until the window and the budget hold, or one message
// besides them is left. It is the last resort: compaction keeps the
// context within the model's window long before.
func (p LLMContextProjection) trim(c *LLMContext) {
	first := c.first()
	drop := 0
	tokens := c.Tokens
	over := func() bool {
		rest := len(c.Messages) - first - drop
		return rest > 1 && (rest > p.Options.maxMessages() || tokens > p.Options.maxTokens())
	}
	for over() {
		tokens -= c.Messages[first+drop].Tokens
		drop++
		// Results of calls that were just dropped go too.
		for first+drop < len(c.Messages)-1 && c.Messages[first+drop].Role == RoleTool {
			tokens -= c.Messages[first+drop].Tokens
			drop++
		}
	}
	if drop == 0 {
		return
	}
	c.Messages = append(c.Messages[:first], c.Messages[first+drop:]...)
	c.Tokens = tokens
	c.Dropped += drop
}

package views

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projections"
)

// Timeline is what a person sees of a conversation, in log order: messages,
// tool calls paired with their outcome (whatever order outcomes arrive in),
// LLM errors, cancels, resumes and the end.
type Timeline struct {
	Items []TimelineItem `json:"items"`
	// Dropped is the last context_dropped an llm.requested recorded.
	Dropped int `json:"dropped,omitempty"`

	// orphans counts the tool call items without a name (an outcome that
	// came before its request), once counted: each tool request looks
	// for its orphan, and searching the whole timeline for one that is
	// almost never there made every request cost the timeline's length.
	// A state decoded from the store counts them on first use.
	orphans int
	counted bool
}

// Kinds of timeline items.
const (
	ItemStarted   = "started"
	ItemUser      = "user"
	ItemAssistant = "assistant"
	ItemToolCall  = "tool_call"
	ItemLLMError  = "llm_error"
	ItemCancel    = "cancel"
	ItemResume    = "resume"
	ItemStopped   = "stopped"
	// ItemBudget is a conversation.budget.exceeded: its reason says what
	// was spent and how to go on.
	ItemBudget = "budget"
	// ItemMode is a conversation.mode: its text is the new mode, who set
	// it and why.
	ItemMode = "mode"
	// ItemApproval is a conversation.tool.approval.requested (the call id,
	// tool, args and why), ItemDecision its answer (who, approve or deny,
	// remember).
	ItemApproval = "approval"
	ItemDecision = "decision"
	// ItemCompact is a conversation.compact (who asked, why);
	// ItemCompacted a conversation.compacted ("N messages → summary (T
	// tokens)"), ItemCompactFailed a conversation.compaction.failed (its
	// error); ItemDropped an LLM call whose context the last-resort guard
	// trimmed further (llm.requested's context_dropped grew): messages
	// lost without a summary.
	ItemCompact       = "compact"
	ItemCompacted     = "compacted"
	ItemCompactFailed = "compaction_failed"
	ItemDropped       = "dropped"
)

// TimelineItem is one line of a timeline. A tool call is one item from its
// request on; its outcome updates it in place. An outcome whose request has
// not been seen yet is an item of its own until the request arrives.
type TimelineItem struct {
	Seq   uint64     `json:"seq"`
	Time  time.Time  `json:"time"`
	Kind  string     `json:"kind"`
	Text  string     `json:"text,omitempty"`
	Tool  *ToolCall  `json:"tool,omitempty"`
	Error *bus.Error `json:"error,omitempty"`
	// Approval is set on ItemApproval and ItemDecision items.
	Approval *ApprovalItem `json:"approval,omitempty"`
	// LLM is set on an ItemLLMError: which attempt failed and what next.
	LLM *LLMAttempt `json:"llm,omitempty"`
}

// ApprovalItem is an approval asked (Name, Args, Reason, TimeoutMS) or
// given (Decision, Remember, By, Reason).
type ApprovalItem struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	TimeoutMS int64           `json:"timeout_ms,omitempty"`
	Decision  string          `json:"decision,omitempty"`
	Remember  string          `json:"remember,omitempty"`
	By        string          `json:"by,omitempty"`
}

// LLMAttempt is what a conversation.llm.failed says of its attempt.
type LLMAttempt struct {
	Attempt   int   `json:"attempt,omitempty"`
	Status    int   `json:"status,omitempty"`      // HTTP status
	RetryInMS int64 `json:"retry_in_ms,omitempty"` // 0: not retried, or at once when Retryable
	Retryable bool  `json:"retryable,omitempty"`
}

// Tool call states.
const (
	ToolRequested = "requested"
	ToolRunning   = "running"
	ToolCompleted = "completed"
	ToolFailed    = "failed"
	ToolCancelled = "cancelled"
	ToolTimedOut  = "timeout"
	// ToolAwaitingApproval: the call waits for conversation.tool.approval.
	ToolAwaitingApproval = "awaiting_approval"
	// ToolDenied: the call was denied; its conversation.tool.failed
	// (error type denied) follows.
	ToolDenied = "denied"
)

// ToolCall is a tool call and, once known, its outcome.
type ToolCall struct {
	CallID    string                    `json:"call_id"`
	Name      string                    `json:"name,omitempty"`
	Args      json.RawMessage           `json:"args,omitempty"`
	ArgsError string                    `json:"args_error,omitempty"` // the arguments were not JSON: why
	ArgsText  string                    `json:"args_text,omitempty"`  // and as the model sent them
	State     string                    `json:"state"`
	Output    json.RawMessage           `json:"output,omitempty"`
	OutputRef *conversation.ArtifactRef `json:"output_ref,omitempty"`
	Error     *bus.Error                `json:"error,omitempty"`
	Reason    string                    `json:"reason,omitempty"`
	// ResultSeq is the stream sequence of the outcome; 0 while pending.
	ResultSeq uint64 `json:"result_seq,omitempty"`
	// Child is the conversation a delegate call started (its id in the
	// project), from the call's outcome.
	Child string `json:"child,omitempty"`
}

// TimelineProjection folds conversation events into a Timeline.
type TimelineProjection struct{}

func (TimelineProjection) Name() string                   { return ViewTimeline }
func (TimelineProjection) Version() string                { return "5" }
func (TimelineProjection) Selector() projections.Selector { return selector }
func (TimelineProjection) Init() *Timeline {
	return &Timeline{Items: []TimelineItem{}, counted: true}
}

// Apply implements projections.Projection.
func (TimelineProjection) Apply(t *Timeline, e *projections.Entry) *Timeline {
	ev := decoded.Of(e)
	if ev.Invalid != "" {
		return t
	}
	d := &ev.Data
	item := TimelineItem{Seq: ev.Seq, Time: ev.Time}
	switch ev.Type {
	case conversation.Started:
		item.Kind, item.Text = ItemStarted, d.Title
		if g := d.Delegated; g != nil {
			item.Text = strings.TrimSpace(fmt.Sprintf("%s delegated by %s (call %s, depth %d)", d.Title, g.Conversation, g.CallID, g.Depth))
		}
	case conversation.UserMessage:
		item.Kind, item.Text = ItemUser, d.Text
	case conversation.AssistantMessage:
		if d.Text == "" && d.ToolCalls > 0 {
			return t // nothing to read: the answer is its tool calls, items of their own
		}
		item.Kind, item.Text = ItemAssistant, d.Text
	case conversation.LLMFailed:
		item.Kind, item.Error = ItemLLMError, d.Error
		if d.Attempt > 0 || d.Status > 0 || d.RetryInMS > 0 || d.Retryable {
			item.LLM = &LLMAttempt{Attempt: d.Attempt, Status: d.Status, RetryInMS: d.RetryInMS, Retryable: d.Retryable}
		}
	case conversation.ToolApprovalRequested:
		item.Kind = ItemApproval
		item.Approval = &ApprovalItem{CallID: d.CallID, Name: d.Name, Args: d.Args, Reason: d.Reason, TimeoutMS: d.TimeoutMS}
		if i := t.findCall(d.CallID, false); i >= 0 && t.Items[i].Tool.State == ToolRequested {
			t.Items[i].Tool.State = ToolAwaitingApproval
		}
	case conversation.ToolApproval:
		item.Kind = ItemDecision
		item.Approval = &ApprovalItem{CallID: d.CallID, Decision: d.Decision, Remember: d.Remember, By: d.By, Reason: d.Reason}
		i := t.findCall(d.CallID, false)
		if i < 0 || t.Items[i].Tool.State != ToolAwaitingApproval {
			// As in Status, only the first answer to a question counts.
			item.Text = "ignored: the call was not awaiting approval"
			break
		}
		switch d.Decision {
		case conversation.DecisionApprove:
			t.Items[i].Tool.State = ToolRequested
		case conversation.DecisionDeny:
			t.Items[i].Tool.State = ToolDenied
		}
	case conversation.Cancel:
		item.Kind, item.Text = ItemCancel, d.Reason
	case conversation.Resume:
		item.Kind, item.Text = ItemResume, d.Reason
	case conversation.Stopped:
		item.Kind, item.Text = ItemStopped, stopReason(d.Reason)
	case conversation.BudgetExceeded:
		item.Kind, item.Text = ItemBudget, d.Reason
	case conversation.ModeChanged:
		item.Kind, item.Text = ItemMode, modeText(d)
	case conversation.CompactAsked:
		item.Kind, item.Text = ItemCompact, modeText(&conversation.Data{Mode: "asked", By: d.By, Reason: d.Reason})
	case conversation.Compacted:
		item.Kind, item.Text = ItemCompacted, compactedText(d)
	case conversation.CompactionFailed:
		item.Kind, item.Error = ItemCompactFailed, d.Error
	case conversation.LLMRequested:
		if d.ContextDropped <= t.Dropped {
			return t
		}
		item.Kind = ItemDropped
		item.Text = fmt.Sprintf("%d more of the oldest messages dropped from the context without a summary (%d in all): the last-resort guard of llm_context acted, compaction did not keep up", d.ContextDropped-t.Dropped, d.ContextDropped)
		t.Dropped = d.ContextDropped
	case conversation.ToolRequested:
		call := &ToolCall{CallID: d.CallID, Name: d.Name, Args: d.Args, ArgsError: d.ArgsError, ArgsText: d.ArgsText, State: ToolRequested}
		// An outcome that arrived first is folded into the call now.
		if i := t.findCall(d.CallID, true); i >= 0 {
			orphan := t.Items[i].Tool
			t.Items = append(t.Items[:i], t.Items[i+1:]...)
			t.orphans--
			call.State, call.Output, call.OutputRef, call.Error, call.Reason, call.ResultSeq =
				orphan.State, orphan.Output, orphan.OutputRef, orphan.Error, orphan.Reason, orphan.ResultSeq
		}
		item.Kind, item.Tool = ItemToolCall, call
	case conversation.ToolStarted, conversation.ToolCompleted, conversation.ToolFailed, conversation.ToolCancelled, conversation.ToolTimeout:
		i := t.findCall(d.CallID, false)
		if i < 0 {
			i = t.findCall(d.CallID, true)
		}
		if i < 0 {
			t.add(TimelineItem{Seq: ev.Seq, Time: ev.Time, Kind: ItemToolCall, Tool: &ToolCall{CallID: d.CallID, State: ToolRequested}})
			i = len(t.Items) - 1
		}
		updateCall(t.Items[i].Tool, ev)
		return t
	default:
		return t // llm.requested, llm.completed: not for people
	}
	t.add(item)
	return t
}

// add appends it, counting it when it is an orphan.
func (t *Timeline) add(it TimelineItem) {
	t.count()
	if it.Kind == ItemToolCall && it.Tool.Name == "" {
		t.orphans++
	}
	t.Items = append(t.Items, it)
}

// count counts the orphans of a timeline decoded from the store.
func (t *Timeline) count() {
	if t.counted {
		return
	}
	t.orphans, t.counted = 0, true
	for i := range t.Items {
		if it := &t.Items[i]; it.Kind == ItemToolCall && it.Tool.Name == "" {
			t.orphans++
		}
	}
}

// findCall returns the index of the tool call item for callID: the
// requested one, or (orphan true) one made by an outcome that came first.
// It searches from the end, where recent calls are.
func (t *Timeline) findCall(callID string, orphan bool) int {
	if orphan {
		if t.count(); t.orphans == 0 {
			return -1
		}
	}
	for i := len(t.Items) - 1; i >= 0; i-- {
		it := &t.Items[i]
		if it.Kind == ItemToolCall && it.Tool.CallID == callID && (it.Tool.Name == "") == orphan {
			return i
		}
	}
	return -1
}

// updateCall records a tool call's progress or outcome. A call that has an
// outcome keeps it: a late "started" does not reopen it.
func updateCall(c *ToolCall, ev *Event) {
	d := &ev.Data
	switch ev.Type {
	case conversation.ToolStarted:
		if c.State == ToolRequested || c.State == ToolAwaitingApproval {
			c.State = ToolRunning
		}
		return
	case conversation.ToolCompleted:
		c.State, c.Output, c.OutputRef = ToolCompleted, d.Output, d.OutputRef
		c.Child = d.ConversationID
	case conversation.ToolFailed:
		c.State, c.Error = ToolFailed, d.Error
		c.Child = d.ConversationID
	case conversation.ToolCancelled:
		c.State, c.Reason = ToolCancelled, d.Reason
	case conversation.ToolTimeout:
		c.State = ToolTimedOut
	}
	c.ResultSeq = ev.Seq
}

func stopReason(r string) string {
	if r == "" {
		return conversation.StopCompleted
	}
	return r
}

// modeText says what a conversation.mode set: "ask (by alice: review
// the edits)".
// compactedText is what a compaction did: "N messages → summary (T
// tokens)", T the context's estimate after it, and before.
func compactedText(d *conversation.Data) string {
	n := 0
	if d.Replaces != nil {
		n = d.Replaces.Messages
	}
	return fmt.Sprintf("%d messages → summary (%d tokens; %d before): %s", n, d.TokensAfter, d.TokensBefore, d.Summary)
}

func modeText(d *conversation.Data) string {
	var who []string
	if d.By != "" {
		who = append(who, "by "+d.By)
	}
	if d.Reason != "" {
		who = append(who, d.Reason)
	}
	if len(who) == 0 {
		return d.Mode
	}
	return d.Mode + " (" + strings.Join(who, ": ") + ")"
}

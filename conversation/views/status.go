package views

import (
	"slices"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projections"
)

// Conversation states, as Status.State reports them.
const (
	StateIdle          = "idle"           // nothing in flight
	StateAwaitingLLM   = "awaiting_llm"   // an LLM call was requested and has no outcome yet
	StateAwaitingTools = "awaiting_tools" // tool calls are pending
	// StateAwaitingApproval: a tool call waits for a person's approval
	// (it wins over awaiting_tools: the turn cannot end without one).
	StateAwaitingApproval = "awaiting_approval"
	StateCompleted        = "completed" // stopped with reason completed
	StateFailed           = "failed"    // the last LLM call failed, or stopped with reason failed
	StateCancelled        = "cancelled" // cancelled (pending tool calls may still be listed)
	// StateBudgetExceeded: the conversation's budget is spent; no model
	// is asked again (conversation.budget.exceeded).
	StateBudgetExceeded = "budget_exceeded"
)

// Status is where a conversation stands and what it waits for.
type Status struct {
	Project      string                   `json:"project,omitempty"`
	Conversation string                   `json:"conversation,omitempty"`
	Parent       *conversation.ForkOrigin `json:"parent,omitempty"`
	// Delegated names the conversation that delegated to this one.
	Delegated *conversation.Delegation `json:"delegated,omitempty"`
	State     string                   `json:"state"`
	// PendingTools are the tool calls requested and without an outcome, in
	// the order they were requested.
	PendingTools []PendingTool `json:"pending_tools"`
	// LLMRequest is the LLM call in flight, if any.
	LLMRequest *PendingLLM `json:"llm_request,omitempty"`
	// Early lists call ids whose outcome arrived before their request, so
	// that the request, when it comes, is not taken as pending.
	Early []string `json:"early,omitempty"`
	// Stopped is the reason of conversation.stopped, until a resume.
	Stopped   string `json:"stopped,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	LLMFailed bool   `json:"llm_failed,omitempty"`
	// RememberedTools are the tools approved with remember
	// "conversation": their calls are not asked about again.
	RememberedTools []string `json:"remembered_tools,omitempty"`
	// Usage sums the tokens of every conversation.llm.completed of the
	// log (a fork's copied history included), CostUSD their cost_usd.
	Usage   conversation.Usage `json:"usage,omitzero"`
	CostUSD float64            `json:"cost_usd,omitempty"`
	// Budget is the conversation's (conversation.started), and
	// BudgetExceeded what was spent of it (tokens or cost) once the loop
	// recorded conversation.budget.exceeded.
	Budget         *conversation.Budget `json:"budget,omitempty"`
	BudgetExceeded string               `json:"budget_exceeded,omitempty"`
	// Compactions counts the conversation.compacted.
	Compactions int `json:"compactions,omitempty"`
	// Mode is the conversation's permission mode: conversation.started's,
	// then the last conversation.mode's (plan, ask or auto).
	Mode string `json:"mode"`
	// Worktree is the git worktree the conversation works in
	// (conversation.started's; nil: the project's checkout).
	Worktree *conversation.Worktree `json:"worktree,omitempty"`
	// LastSeq and LastEventID name the last conversation event folded.
	LastSeq     uint64    `json:"last_seq"`
	LastEventID string    `json:"last_event_id,omitempty"`
	LastType    string    `json:"last_type,omitempty"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// maxEarly bounds the outcomes a read model remembers while it waits for
// their request; an outcome whose request never comes (or was trimmed
// away) must not make a state grow without end.
const maxEarly = 64

// PendingTool is a tool call without an outcome. Its State is
// ToolRequested, ToolRunning, ToolAwaitingApproval (from
// conversation.tool.approval.requested to the decision), or ToolDenied (a
// person or the timeout denied it; the loop then records its
// conversation.tool.failed with error type denied, which closes it).
type PendingTool struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Seq     uint64 `json:"seq"`
	EventID string `json:"event_id"`
	// Approval is the latest approval asked for the call, kept after the
	// decision (which it then records).
	Approval *PendingApproval `json:"approval,omitempty"`
}

// PendingApproval is a conversation.tool.approval.requested and, once
// given, its decision.
type PendingApproval struct {
	EventID   string    `json:"event_id"`
	Seq       uint64    `json:"seq"`
	At        time.Time `json:"at"` // the request's time: the timeout runs from it
	Reason    string    `json:"reason,omitempty"`
	TimeoutMS int64     `json:"timeout_ms,omitempty"`
	Decision  string    `json:"decision,omitempty"`
	By        string    `json:"by,omitempty"`
}

// PendingLLM is an LLM call without an outcome.
type PendingLLM struct {
	EventID  string `json:"event_id"`
	Seq      uint64 `json:"seq"`
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	Step     int    `json:"step,omitempty"`
	Attempt  int    `json:"attempt,omitempty"`
}

// StatusProjection folds conversation events into a Status.
type StatusProjection struct{}

func (StatusProjection) Name() string                   { return ViewStatus }
func (StatusProjection) Version() string                { return "5" }
func (StatusProjection) Selector() projections.Selector { return selector }
func (StatusProjection) Init() *Status                  { return NewStatus() }

// NewStatus returns the status of a conversation before any event.
func NewStatus() *Status { return &Status{State: StateIdle, PendingTools: []PendingTool{}} }

// Apply implements projections.Projection.
func (StatusProjection) Apply(s *Status, e *projections.Entry) *Status {
	s.Fold(decoded.Of(e))
	return s
}

// Fold applies one event to s. Outcomes of tool calls that were never
// requested (or are already closed) change nothing.
func (s *Status) Fold(ev *Event) {
	if ev.Invalid != "" {
		return
	}
	d := &ev.Data
	switch ev.Type {
	case conversation.Started:
		s.Project, s.Conversation, s.Parent, s.Budget = d.ProjectID, d.ConversationID, d.Parent, d.Budget
		s.Delegated = d.Delegated
		s.Mode = conversation.EffectiveMode(d.Mode)
		s.Worktree = d.Worktree
	case conversation.ModeChanged:
		s.Mode = conversation.EffectiveMode(d.Mode)
	case conversation.UserMessage:
		// A person writing again reopens a conversation that failed or
		// was cancelled; a stopped one needs a resume.
		s.Cancelled, s.LLMFailed = false, false
	case conversation.LLMRequested:
		s.LLMRequest = &PendingLLM{EventID: ev.ID, Seq: ev.Seq, Model: d.Model, Provider: d.Provider, Step: d.Step, Attempt: d.Attempt}
		s.LLMFailed = false
	case conversation.LLMCompleted:
		s.LLMRequest = nil
		if d.Usage != nil {
			s.Usage.InputTokens += d.Usage.InputTokens
			s.Usage.OutputTokens += d.Usage.OutputTokens
		}
		s.CostUSD = conversation.AddUSD(s.CostUSD, d.CostUSD)
	case conversation.Compacted:
		// A summary is a model call too: its usage counts, as the loop
		// counts it toward the budget.
		s.Compactions++
		if d.Usage != nil {
			s.Usage.InputTokens += d.Usage.InputTokens
			s.Usage.OutputTokens += d.Usage.OutputTokens
		}
		s.CostUSD = conversation.AddUSD(s.CostUSD, d.CostUSD)
	case conversation.BudgetExceeded:
		s.BudgetExceeded = d.What
	case conversation.LLMFailed:
		s.LLMRequest, s.LLMFailed = nil, true
	case conversation.ToolRequested:
		if i := slices.Index(s.Early, d.CallID); i >= 0 {
			s.Early = slices.Delete(s.Early, i, i+1)
		} else if s.pending(d.CallID) < 0 {
			s.PendingTools = append(s.PendingTools, PendingTool{CallID: d.CallID, Name: d.Name, State: ToolRequested, Seq: ev.Seq, EventID: ev.ID})
		}
	case conversation.ToolStarted:
		if i := s.pending(d.CallID); i >= 0 {
			s.PendingTools[i].State = ToolRunning
		}
	case conversation.ToolApprovalRequested:
		// Only a call that has not started can wait for approval.
		if i := s.pending(d.CallID); i >= 0 && s.PendingTools[i].State == ToolRequested {
			p := &s.PendingTools[i]
			p.State = ToolAwaitingApproval
			p.Approval = &PendingApproval{EventID: ev.ID, Seq: ev.Seq, At: ev.Time, Reason: d.Reason, TimeoutMS: d.TimeoutMS}
		}
	case conversation.ToolApproval:
		// The first decision counts; a late or repeated one changes nothing.
		if i := s.pending(d.CallID); i >= 0 && s.PendingTools[i].State == ToolAwaitingApproval {
			p := &s.PendingTools[i]
			p.Approval.Decision, p.Approval.By = d.Decision, d.By
			switch d.Decision {
			case conversation.DecisionApprove:
				p.State = ToolRequested
				if d.Remember == conversation.RememberConversation && !slices.Contains(s.RememberedTools, p.Name) {
					s.RememberedTools = append(s.RememberedTools, p.Name)
				}
			case conversation.DecisionDeny:
				p.State = ToolDenied
			}
		}
	case conversation.ToolCompleted, conversation.ToolFailed, conversation.ToolCancelled, conversation.ToolTimeout:
		if i := s.pending(d.CallID); i >= 0 {
			s.PendingTools = append(s.PendingTools[:i], s.PendingTools[i+1:]...)
		} else if len(s.Early) < maxEarly {
			s.Early = append(s.Early, d.CallID)
		}
	case conversation.Cancel:
		s.Cancelled = true
	case conversation.Resume:
		s.Cancelled, s.LLMFailed, s.Stopped = false, false, ""
	case conversation.Stopped:
		s.Stopped = stopReason(d.Reason)
	}
	s.LastSeq, s.LastEventID, s.LastType, s.UpdatedAt = ev.Seq, ev.ID, ev.Type, ev.Time
	s.State = s.derive()
}

func (s *Status) pending(callID string) int {
	for i := range s.PendingTools {
		if s.PendingTools[i].CallID == callID {
			return i
		}
	}
	return -1
}

// derive computes State from the flags; the order says which wins.
func (s *Status) derive() string {
	switch {
	case s.Stopped == conversation.StopFailed:
		return StateFailed
	case s.Stopped == conversation.StopCancelled:
		return StateCancelled
	case s.Stopped != "":
		return StateCompleted
	case s.Cancelled:
		return StateCancelled
	case s.awaitingApproval():
		return StateAwaitingApproval
	case s.LLMRequest != nil:
		return StateAwaitingLLM
	case len(s.PendingTools) > 0:
		return StateAwaitingTools
	case s.LLMFailed:
		return StateFailed
	case s.BudgetExceeded != "":
		return StateBudgetExceeded
	}
	return StateIdle
}

// awaitingApproval reports whether a pending call waits for a decision.
func (s *Status) awaitingApproval() bool {
	for i := range s.PendingTools {
		if s.PendingTools[i].State == ToolAwaitingApproval {
			return true
		}
	}
	return false
}

package conversation

import (
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/jido-bus/jido-bus/bus"
)

// Event types of a conversation.
const (
	Started          = "conversation.started"
	UserMessage      = "conversation.user.message"
	AssistantDelta   = "conversation.assistant.delta" // transient: never logged
	AssistantMessage = "conversation.assistant.message"
	LLMRequested     = "conversation.llm.requested"
	LLMCompleted     = "conversation.llm.completed"
	LLMFailed        = "conversation.llm.failed"
	ToolRequested    = "conversation.tool.requested"
	ToolStarted      = "conversation.tool.started"
	ToolCompleted    = "conversation.tool.completed"
	ToolFailed       = "conversation.tool.failed"
	ToolCancelled    = "conversation.tool.cancelled"
	ToolTimeout      = "conversation.tool.timeout"
	Cancel           = "conversation.cancel"
	Resume           = "conversation.resume"
	Stopped          = "conversation.stopped"

	// ToolApprovalRequested: the policy says ask; the call waits for a
	// ToolApproval. Both have the call id as causationid.
	ToolApprovalRequested = "conversation.tool.approval.requested"
	ToolApproval          = "conversation.tool.approval"

	// BudgetExceeded: the conversation's budget (Data.Budget of its
	// started) is spent. The loop records it when an LLM call brings a
	// total to its limit, and again for every user message after: no
	// model is asked again.
	BudgetExceeded = "conversation.budget.exceeded"

	// ModeChanged sets the conversation's permission mode (Data.Mode)
	// for the tool calls the loop starts after it; by says who.
	ModeChanged = "conversation.mode"

	// CompactAsked asks the loop to compact the conversation now
	// (jido-bus conv compact): between turns it compacts at once; one
	// that slips in during a turn is done before the turn's next LLM
	// call. by and reason say who and why.
	CompactAsked = "conversation.compact"
	// Compacted: the messages of the conversation's llm_context up to
	// Data.Replaces.ToSeq (but for the first user message, the task) are
	// replaced by Data.Summary, the model's own summary of them. Its
	// causationid is the Compact directive's request.
	Compacted = "conversation.compacted"
	// CompactionFailed: a compaction was not made (the model failed,
	// nothing could be replaced, the node stopped); the conversation goes
	// on uncompacted. Its causationid is the Compact directive's request.
	CompactionFailed = "conversation.compaction.failed"
)

// Types lists every conversation event type, transient ones included.
func Types() []string {
	return []string{
		Started, UserMessage, AssistantDelta, AssistantMessage,
		LLMRequested, LLMCompleted, LLMFailed,
		ToolRequested, ToolStarted, ToolCompleted, ToolFailed, ToolCancelled, ToolTimeout,
		ToolApprovalRequested, ToolApproval,
		Cancel, Resume, Stopped, BudgetExceeded, ModeChanged, HookDecided,
		CompactAsked, Compacted, CompactionFailed,
	}
}

// TypePattern selects the conversation events among a conversation
// stream's entries; the runtime's own bookkeeping entries there have types
// starting with "jido." and do not match.
const TypePattern = "conversation.**"

// IsTransient reports whether events of type t are published for live
// views only and never written to the log (conversation.assistant.delta).
func IsTransient(t string) bool { return t == AssistantDelta }

// ExtParentID is the extension attribute a forked conversation's events
// may carry: the id of the event in the parent conversation they continue
// from. Every conversation event also carries bus.ExtCausationID: the id of
// the event it answers, and for the outcome of a tool call, the call id.
const ExtParentID = "parentid"

// Error types of interrupted work: a tool call or LLM call that was
// requested but never finished before a restart, a resume or a fork.
const ReasonInterrupted = "interrupted"

// Error types of conversation.llm.failed besides ReasonInterrupted (and of
// conversation.tool.failed for ReasonDenied and ReasonCancelled). The
// executor classifies a provider's failure; the loop ends a turn with
// ReasonMaxSteps or ReasonMaxToolCalls.
const (
	ReasonCancelled    = "cancelled"      // the turn was cancelled
	ReasonAuth         = "auth"           // 401 or 403: the key is missing, wrong or not allowed
	ReasonRateLimited  = "rate_limited"   // 429: retried after Retry-After or a backoff
	ReasonServer       = "server"         // 5xx: retried with a backoff
	ReasonBadRequest   = "bad_request"    // another 4xx: not retried
	ReasonStream       = "stream"         // the stream was cut or malformed: retried
	ReasonTimeout      = "timeout"        // the call ran past its time limit
	ReasonMaxSteps     = "max_steps"      // the turn made Limits.MaxSteps LLM calls
	ReasonMaxToolCalls = "max_tool_calls" // the turn made Limits.MaxToolCalls tool calls
	ReasonConfig       = "config"         // no provider, model or key to call
	ReasonDenied       = "denied"         // a person (or the approval timeout) denied the tool call
	// ReasonBudget fails the tool calls of the answer that spent the
	// conversation's budget: they are not run, since the model would
	// never be asked to read their results.
	ReasonBudget = "budget_exceeded"
	// ReasonPlanMode fails a call of a tool that writes or runs in a
	// conversation in plan mode: it is not run.
	ReasonPlanMode = "plan_mode"
)

// What a conversation.budget.exceeded says was spent.
const (
	BudgetTokens = "tokens"
	BudgetCost   = "cost"
)

// Decisions of conversation.tool.approval, and its only remember value.
const (
	DecisionApprove      = "approve"
	DecisionDeny         = "deny"
	RememberConversation = "conversation"
	// ApprovalTimeoutReason is the reason of the node's automatic deny.
	ApprovalTimeoutReason = "timeout"
)

// Stopped reasons that set the conversation's final status.
const (
	StopCompleted = "completed"
	StopFailed    = "failed"
	StopCancelled = "cancelled"
)

// StreamPrefix starts the log stream of every conversation.
const StreamPrefix = "conversation/"

// Stream returns the log stream of the conversation key
// "<project-id>/<conversation-id>": "conversation/<project-id>/<conversation-id>".
func Stream(key string) string { return StreamPrefix + key }

// KeyOf returns the conversation key of a conversation stream, and false
// for any other stream.
func KeyOf(stream string) (string, bool) {
	key, ok := strings.CutPrefix(stream, StreamPrefix)
	return key, ok && key != ""
}

// Source returns the CloudEvents source of events the runtime generates
// for conversation key (interruptions, forks): "/conversation/<key>".
func Source(key string) string { return "/" + StreamPrefix + key }

// NewEvent builds an event of conversation key: its type, its id, the id
// of what it answers (causationid), its data as JSON, its source
// Source(key), and its time at (none when at is zero: the loop, which has
// no clock, gives the time of the event it handles).
func NewEvent(key, typ, id, causation string, at time.Time, data any) (bus.Signal, error) {
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource(Source(key))
	if !at.IsZero() {
		s.SetTime(at)
	}
	s.SetExtension(bus.ExtCausationID, causation)
	return s, bus.SetJSONData(&s, data)
}

// CausationID returns the causationid extension of e, or "".
func CausationID(e bus.Signal) string { return extString(e, bus.ExtCausationID) }

// ParentID returns the parentid extension of e, or "".
func ParentID(e bus.Signal) string { return extString(e, ExtParentID) }

// extString reads the extension from the map of a CloudEvents 1.0 context
// itself: Extensions() copies the map, which cost a rebuild more than
// decoding the event's data.
func extString(e bus.Signal, name string) string {
	var v any
	if ctx, ok := e.Context.(*event.EventContextV1); ok {
		v = ctx.Extensions[name]
	} else {
		v = e.Extensions()[name]
	}
	s, _ := v.(string)
	return s
}

package convapi

import (
	"encoding/json"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
)

// Area is the API's area: <prefix>.api.conv.<verb>.
const Area = "conv"

// Verbs of the API.
const (
	VerbStart   = "start"
	VerbStop    = "stop"
	VerbList    = "ls"
	VerbShow    = "show"
	VerbFork    = "fork"
	VerbSend    = "send"
	VerbCancel  = "cancel"
	VerbApprove = "approve"
	VerbMode    = "mode"
	VerbCompact = "compact"
)

// StartRequest is conv.start's body: a conversation of project Project.
type StartRequest struct {
	Project string `json:"project"`
	// Conversation is the conversation's id in the project, one segment
	// of [A-Za-z0-9_-] starting with a letter or digit; empty means a new
	// ULID. Its agent id is <project>/<conversation>.
	Conversation string `json:"conversation,omitempty"`
	// System is the system prompt, the first message of every LLM call.
	System string `json:"system,omitempty"`
	// LLM overrides the project's model settings (.jido/config.yaml)
	// for this conversation: which of the node's providers, the model
	// and how — never an endpoint or a key (LLMConfig.Check).
	LLM *conversation.LLMConfig `json:"llm,omitempty"`
	// Limits bound each turn (max steps, max tool calls, parallel tools).
	Limits *conversation.Limits `json:"limits,omitempty"`
	// Budget bounds what the whole conversation may spend (tokens, USD);
	// once spent, the loop records conversation.budget.exceeded and asks
	// no model again.
	Budget *conversation.Budget `json:"budget,omitempty"`
	// Mode is the conversation's permission mode (conversation.ModePlan,
	// ModeAsk, ModeAuto; empty: auto), over the project's policy and
	// never looser than it; conv.mode changes it later.
	Mode string `json:"mode,omitempty"`
	// By is who started it, recorded as conversation.started's data.by:
	// the A2A gateway's owner of the task (a2a.OwnerOf). Set by Go
	// callers only (json "-"): a request over NATS cannot make its
	// conversation another caller's task.
	By string `json:"-"`
	// Worktree asks for the conversation to work in its own git worktree
	// on its own branch (as worktree: true in the project's
	// .jido/config.yaml does for all): refused for a project that is not
	// a git repository.
	Worktree bool `json:"worktree,omitempty"`
	// Delegated and Tools start a delegated conversation (Go callers
	// only, the node's delegate tool): the runtime's child of the
	// conversation that delegated to it, so that it stops with it, with
	// that conversation and its depth, and the tools it may call, in its
	// conversation.started.
	Delegated *conversation.Delegation `json:"-"`
	Tools     *[]string                `json:"-"`
}

// Info is conv.start's reply: the conversation started.
type Info struct {
	Project      string `json:"project"`
	Conversation string `json:"conversation"`
	// ID is the conversation's agent id, <project>/<conversation>: the
	// conv of conv send and conv show.
	ID     string `json:"id"`
	Stream string `json:"stream"`
	// Status is its agent's: running or passive (idle, woken by its next
	// signal).
	Status string `json:"status"`
}

// StopRequest is conv.stop's body.
type StopRequest struct {
	Project      string `json:"project"`
	Conversation string `json:"conversation"`
	Reason       string `json:"reason,omitempty"`
	// Worktree says what becomes of the conversation's git worktree, if
	// it has one: WorktreeKeep (the default) or WorktreeRemove.
	Worktree string `json:"worktree,omitempty"`
}

// StopReply is conv.stop's reply.
type StopReply struct {
	Project      string `json:"project"`
	Conversation string `json:"conversation"`
	// Worktree is what became of its git worktree (absent: it had none).
	Worktree *conversation.WorktreeEnd `json:"worktree,omitempty"`
}

// ListRequest lists conversations, in key order: those of Project (all
// when empty), after the key After, at most Limit (zero: DefaultPageSize;
// negative: refused) and at most MaxReplyBytes of them.
type ListRequest struct {
	Project string `json:"project,omitempty"`
	After   string `json:"after,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

// DefaultPageSize is the conv.ls page size when a request gives none;
// MaxPageSize the largest, which a larger limit asks for.
const (
	DefaultPageSize = 500
	MaxPageSize     = 10000
)

// MaxReplyBytes bounds one conv.ls reply (NATS's default maximum payload
// is 1 MiB): a page stops before it would pass this, with Next set.
const MaxReplyBytes = 512 << 10

// ListReply is one page of conversations. Next is the After of the
// following page; empty at the end.
type ListReply struct {
	Conversations []Summary `json:"conversations"`
	Next          string    `json:"next,omitempty"`
}

// Summary is one line of conv.ls, from the status read model.
type Summary struct {
	Conv         string    `json:"conv"`
	State        string    `json:"state"`
	PendingTools int       `json:"pending_tools"`
	LastSeq      uint64    `json:"last_seq"`
	UpdatedAt    time.Time `json:"updated_at"`
	Parent       string    `json:"parent,omitempty"`
	// DelegatedBy is the conversation that delegated to this one.
	DelegatedBy string `json:"delegated_by,omitempty"`
	// TokensIn, TokensOut and CostUSD sum the conversation's LLM calls
	// (cost: of the models its node's operator priced).
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	CostUSD   float64 `json:"cost_usd"`
	// Branch is the branch of the git worktree the conversation works
	// in ("": the project's checkout).
	Branch string `json:"branch,omitempty"`
}

// ShowRequest asks for one read model (View, default timeline) of
// conversation Conv ("<project-id>/<conversation-id>"), as of the last
// checkpoint, or folded up to the conversation's stream sequence Seq.
type ShowRequest struct {
	Conv string `json:"conv"`
	View string `json:"view,omitempty"`
	Seq  uint64 `json:"seq,omitempty"`
}

// ShowReply is the read model's state as JSON. Position is the global
// sequence it includes.
type ShowReply struct {
	Conv     string          `json:"conv"`
	View     string          `json:"view"`
	Position uint64          `json:"position"`
	State    json.RawMessage `json:"state"`
}

// ForkRequest forks conversation Conv at its stream sequence Seq into a
// new conversation As (default "<conv>-fork-<seq>" in the same project).
type ForkRequest struct {
	Conv string `json:"conv"`
	Seq  uint64 `json:"seq"`
	As   string `json:"as,omitempty"`
}

// ForkReply names the new conversation and says how many events it
// starts with.
type ForkReply struct {
	Conv    string `json:"conv"`
	Stream  string `json:"stream"`
	Events  int    `json:"events"`
	Version uint64 `json:"version"`
}

// SendRequest is conv.send's body.
type SendRequest struct {
	Conv string `json:"conv"` // <project-id>/<conversation-id>
	Text string `json:"text"`
}

// CancelRequest is conv.cancel's body.
type CancelRequest struct {
	Conv   string `json:"conv"`
	Reason string `json:"reason,omitempty"`
}

// ApproveRequest is conv.approve's body. Reason and By are recorded in the
// event: the CLI's deny --reason, and who decided.
type ApproveRequest struct {
	Conv     string `json:"conv"`
	CallID   string `json:"call_id"`
	Decision string `json:"decision"`
	Remember string `json:"remember,omitempty"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
}

// ModeRequest is conv.mode's body: set conversation Conv's permission
// mode for the tool calls started from now on. Reason and By are
// recorded in the event.
type ModeRequest struct {
	Conv   string `json:"conv"`
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// CompactRequest is conv.compact's body: compact conversation Conv now,
// between turns. Reason and By are recorded in the event.
type CompactRequest struct {
	Conv   string `json:"conv"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// Reply is the reply of conv.send, conv.cancel, conv.approve, conv.mode and conv.compact: the
// appended event's id and the conversation's stream version after it.
type Reply struct {
	ID      string `json:"id"`
	Conv    string `json:"conv"`
	Version uint64 `json:"version"`
}

package tools

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// ToolCall is one request to run a tool. ID is the caller's id for the
// call (an LLM's tool_use id); the runner makes a ULID when it is empty.
type ToolCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// Approved says a person approved this call: a tool whose policy mode
	// is ask runs. Only a caller that asked a person sets it (the
	// assistant's approvals); it is never read from a request.
	Approved bool `json:"-"`
	// WithOutcome, when set, is called with the call's result just before
	// its outcome is recorded; what it returns (a gateway's record of the
	// request that made the call) is recorded with the outcome, in the
	// same commit (Event.With). Only a caller sets it; it is never read
	// from a request.
	WithOutcome func(Result) any `json:"-"`
	// Conversation is the conversation whose assistant made the call
	// (its id in the project), recorded with the call's start and outcome
	// and passed to the calls a workflow makes. Only the assistant sets
	// it; it is never read from a request, so no caller can put a call
	// on a conversation's account.
	Conversation string `json:"-"`
	// Mode is the permission mode of that conversation (conversation.
	// ModePlan, ModeAsk, ModeAuto; "" is auto): the runner holds the call
	// to it by the tool's Safety before the policy is asked. Only the
	// assistant sets it; it is never read from a request.
	Mode string `json:"-"`
	// Within, when set, is the sandbox the call runs in instead of the
	// runner's, made from the runner's current one (so a policy reload
	// reaches it): a conversation's own git worktree as its root under
	// the project's policy. It is passed to the calls a workflow makes.
	// Only the engine sets it; it is never read from a request.
	Within func(*policy.Sandbox) (*policy.Sandbox, error) `json:"-"`
}

// Result is the outcome of one call, in the shape replies carry:
// {"ok":true,"data":…,"artifacts":[…],"logs":[…]} or
// {"ok":false,"error":{"type":…,"message":…,"details":…}}.
//
// When the output is larger than the runner's cap it is stored in the
// ArtifactStore and Data is a small stand-in, {"artifact":id,"size":n,
// "preview":"…"}; the artifact's reference is in Artifacts.
type Result struct {
	OK        bool            `json:"ok"`
	CallID    string          `json:"call_id"`
	Data      json.RawMessage `json:"data,omitempty"`
	Artifacts []ArtifactRef   `json:"artifacts,omitempty"`
	Logs      []string        `json:"logs,omitempty"`
	Error     *Error          `json:"error,omitempty"`
	// Text is the output's text (its Tool.TextField member) when the
	// output is a Texter and inline: a gateway that shows the text beside
	// the data takes it here instead of decoding Data again.
	Text string `json:"-"`
	// Changes are the files the call wrote (and its steps, a
	// workflow's), in order, with the hashes of their contents before
	// and after; the previous contents are in the runner's checkpoints.
	// Only a conversation's calls have them.
	Changes []FileChange `json:"-"`
}

// Texter is an output with a text of its own (the member its tool names
// as TextField, read_file's content): the runner hands it on in
// Result.Text.
type Texter interface{ OutputText() string }

// ArtifactStore keeps outputs too large for a result, once, by content.
// conversation/views.Artifacts satisfies it: one store per node for
// conversations and projects alike. Put must be safe for concurrent use.
type ArtifactStore interface {
	Put(data []byte, mediaType string) (conversation.ArtifactRef, error)
}

// artifactStandIn is Data for an output stored as an artifact.
type artifactStandIn struct {
	Artifact string `json:"artifact"`
	Size     int64  `json:"size"`
	Preview  string `json:"preview,omitempty"`
}

// ArtifactRef names a stored output (the conversation store's reference:
// "sha256:<hex>", size, media type, preview).
type ArtifactRef = conversation.ArtifactRef

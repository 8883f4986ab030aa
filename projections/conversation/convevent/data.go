package convevent

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/bus"
)

// Data is the data of any conversation event: the union of the members the
// sixteen schemas define, so that an entry is decoded once, whatever its
// type, and every read model reads what it needs from the same value. Each
// member is documented with the types that carry it; the schemas say which
// are required.
type Data struct {
	// started
	ProjectID      string      `json:"project_id,omitempty"`
	ConversationID string      `json:"conversation_id,omitempty"`
	Title          string      `json:"title,omitempty"`
	System         string      `json:"system,omitempty"`
	Parent         *ForkOrigin `json:"parent,omitempty"`
	// started, llm.requested, llm.completed
	Model string `json:"model,omitempty"`
	// user.message, assistant.message, assistant.delta
	Text  string `json:"text,omitempty"`
	Index int    `json:"index,omitempty"`
	// llm.requested: 1 for a first call, above 1 for a retry
	Attempt int `json:"attempt,omitempty"`
	// llm.completed
	Usage      *Usage `json:"usage,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// llm.completed, llm.failed: milliseconds
	LatencyMS int64 `json:"latency_ms,omitempty"`
	// llm.failed, tool.failed
	Error     *bus.Error `json:"error,omitempty"`
	Retryable bool       `json:"retryable,omitempty"`
	// tool.*
	CallID string `json:"call_id,omitempty"`
	// tool.requested
	Name string          `json:"name,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// tool.completed: Output inline, or OutputRef to an artifact
	Output    json.RawMessage `json:"output,omitempty"`
	OutputRef *ArtifactRef    `json:"output_ref,omitempty"`
	// tool.completed, tool.failed: milliseconds
	DurationMS int64 `json:"duration_ms,omitempty"`
	// tool.timeout: milliseconds
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// tool.cancelled, cancel, resume, stopped
	Reason string `json:"reason,omitempty"`
}

// ForkOrigin is where a forked conversation branched off its parent.
type ForkOrigin struct {
	Conversation string `json:"conversation"` // the parent's key
	Seq          uint64 `json:"seq"`          // the parent's stream sequence the history ends at
	EventID      string `json:"event_id"`     // the id of the parent's event at Seq
}

// Usage is the token usage of one LLM call.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// ArtifactRef names a large payload stored once, by content, outside the
// log: ID is "sha256:<hex>", Size its length in bytes, Preview its first
// bytes for people and for llm_context.
type ArtifactRef struct {
	ID        string `json:"id"`
	Size      int64  `json:"size"`
	MediaType string `json:"media_type,omitempty"`
	Preview   string `json:"preview,omitempty"`
}

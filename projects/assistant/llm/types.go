package llm

import (
	"context"
	"encoding/json"
)

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Request is one completion request: the whole context of the turn so far.
// It is provider-neutral; each provider maps it onto its own API.
type Request struct {
	// Model overrides the provider's configured model when not empty.
	Model string
	// System is the system prompt; empty means none.
	System   string
	Messages []Message
	Tools    []Tool
	// Temperature overrides the configured temperature when not nil.
	Temperature *float64
	// MaxTokens overrides the configured output limit when > 0.
	MaxTokens int
	// Summary marks a compaction's request (a summarising instruction,
	// the transcript to summarise, no tools). Providers send it as any
	// other; the scripted provider answers it from its script's summary
	// lines, so that a script's turns are not shifted by it.
	Summary bool
}

// Message is one message of the conversation.
type Message struct {
	// Role is one of RoleSystem, RoleUser, RoleAssistant, RoleTool.
	Role    string
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID names the call a RoleTool message answers.
	ToolCallID string
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments (an object schema);
	// empty means an object with no declared properties.
	InputSchema json.RawMessage
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string
	Name string
	// Args is the argument text exactly as the model produced it. It is
	// usually a JSON object but may be invalid JSON: the caller validates.
	Args string
}

// Usage counts tokens of one completion.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Response is the finished assistant message of one attempt. A response
// with no text and no tool calls is valid (an empty answer).
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// StopReason is the provider's own word (stop, tool_calls, end_turn,
	// tool_use, length, max_tokens…).
	StopReason string
	// Model is the model that answered, as the provider reported it.
	Model string
}

// Delta is one streamed piece. It carries either Text, or a piece of the
// tool call at ToolCallIndex (the call's position in the turn, from 0):
// ToolCallID and ToolName are set on the call's first piece, ArgsPiece is
// the next fragment of its argument text.
type Delta struct {
	Text          string
	ToolCallIndex int
	ToolCallID    string
	ToolName      string
	ArgsPiece     string
}

// IsText reports whether d is a piece of text rather than of a tool call.
func (d Delta) IsText() bool {
	return d.ToolCallID == "" && d.ToolName == "" && d.ArgsPiece == ""
}

// Provider completes a request against a model.
//
// Complete makes ONE attempt. It streams: onDelta (which may be nil) is
// called for every piece, serially and before Complete returns, never after.
// It returns the finished message, or an error that [Classify] maps to an
// [*Error] (the providers here always return an *Error). Cancelling ctx aborts
// the stream promptly with Kind cancelled. A Provider is safe for concurrent
// use by several goroutines.
type Provider interface {
	Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

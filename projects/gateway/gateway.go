// Package gateway holds what the protocol gateways (projects/gateway/mcp,
// projects/gateway/a2a) and the HTTP front door share: who is calling, and
// the record every request that reaches a project leaves in the project's
// stream (project.gateway.request: who, what, result).
//
// The gateways are event adapters: an MCP tools/call is a call through the
// project's runner, an A2A task is a conversation. They hold no state of
// their own that the log does not.
package gateway

import "context"

// Caller is who sent a request: the name the front door authenticated
// (the token's name, or "anonymous" on a loopback listener without a
// token, or "stdio" for the stdio MCP server) and where it came from.
type Caller struct {
	Name   string `json:"name"`
	Remote string `json:"remote,omitempty"`
	// Admin is set for an admin of the front door (its admin token, or
	// every caller where no token is configured): it sees what every
	// caller started (A2A tasks), where another caller sees its own.
	Admin bool `json:"admin,omitempty"`
	// MaxMode is the loosest permission mode a conversation this caller
	// starts may have (conversation.ModePlan, ModeAsk; "" is ModeAuto,
	// the policy as it is): the operator's max_mode for its token.
	MaxMode string `json:"max_mode,omitempty"`
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the caller ctx carries, or Caller{Name: "unknown"}.
func CallerOf(ctx context.Context) Caller {
	if c, ok := CallerFrom(ctx); ok {
		return c
	}
	return Caller{Name: "unknown"}
}

// CallerFrom returns the caller ctx carries, and false when it carries
// none: a request the front door let in without a token to a public path
// (an A2A agent card) has no caller.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Request is the record of one gateway request that reached a project.
type Request struct {
	// Gateway is "mcp" or "a2a".
	Gateway string `json:"gateway"`
	// Method is the protocol's method: tools/call, prompts/get,
	// resources/read, message/send, tasks/cancel, …
	Method string `json:"method"`
	// Target is what the method acted on: a tool's or prompt's name, a
	// resource URI, a task or conversation id.
	Target string `json:"target,omitempty"`
	Caller Caller `json:"caller"`
	// Result is "ok" or the error's type word (not_found, denied, …).
	Result string `json:"result"`
	// Error is the error's message, when Result is not "ok".
	Error string `json:"error,omitempty"`
	// DurationMS is how long the request took, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
}

// Recorder appends a Request to a project's stream.
type Recorder interface {
	RecordGatewayRequest(ctx context.Context, project string, r Request) error
}

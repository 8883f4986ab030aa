// Package projectapi serves the project engine's control plane over NATS,
// JSON request/reply on <prefix>.api.project.<verb>:
//
//	open        {"root":"/path","id":"p1","data_dir":".jido","policy":{…}} → ProjectInfo
//	close       {"project":"p1","reason":"…"}                            → {"project":"p1"}
//	ls          {}                                                       → {"projects":[ProjectInfo…]}
//	get         {"project":"p1"}                                         → ProjectInfo
//	reload      {"project":"p1"}                                         → {"project":…,"changed":bool,"changes":{…},"policy":{"source","changed","changes","refused","ignored"}}
//	tools       {"project":"p1"}                                         → {"tools":[{"name","api_name","description","input_schema","output_schema","safety"}…]}
//	tool.call   {"project":"p1","name":"read_file","args":{…},"id":"…"}  → {"call_id","data","artifacts","logs"}
//	assets      {"project":"p1","kind":"skill","name":"review"}          → {"asset":…} or the lists
//	diagnostics {"project":"p1"}                                         → {"diagnostics":[{"file","line","reason"}…]}
//
// A project's conversations are conversation/convapi's: <prefix>.api.conv.*
// (its conv.start, conv.stop and conv.ls were this area's before).
//
// The verb of a tool call is two tokens, "tool.call": the subject is
// <prefix>.api.project.tool.call. Every reply is {"ok":true,…} or
// {"ok":false,"error":{"type","message"}}; a failed tool call's error has
// the runner's type (denied, outside_root, approval_required,
// invalid_args, unknown_tool, timeout, …).
package projectapi

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/mcpclient"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Area is the API's area: <prefix>.api.project.<verb>.
const Area = "project"

// Verbs of the API.
const (
	VerbOpen        = "open"
	VerbClose       = "close"
	VerbList        = "ls"
	VerbGet         = "get"
	VerbReload      = "reload"
	VerbTools       = "tools"
	VerbToolCall    = "tool.call"
	VerbAssets      = "assets"
	VerbDiagnostics = "diagnostics"
)

// ReadVerbs are the verbs that only read; the others open, close, reload
// or run tools. A new slice each time: the node grants a client role
// these, and no caller may change what it grants.
func ReadVerbs() []string {
	return []string{VerbList, VerbGet, VerbTools, VerbAssets, VerbDiagnostics}
}

// Verbs are every verb, read-only ones first (a new slice each time).
func Verbs() []string {
	return append(ReadVerbs(), VerbOpen, VerbClose, VerbReload, VerbToolCall)
}

// OpenRequest is open's body.
type OpenRequest = projects.OpenRequest

// ProjectInfo is open's and get's reply.
type ProjectInfo = projects.ProjectInfo

// ProjectRequest names a project (get, reload, tools, diagnostics).
type ProjectRequest struct {
	Project string `json:"project"`
}

// CloseRequest is close's body.
type CloseRequest struct {
	Project string `json:"project"`
	Reason  string `json:"reason,omitempty"`
}

// CloseReply is close's reply.
type CloseReply struct {
	Project string `json:"project"`
}

// ListReply is ls's reply.
type ListReply struct {
	Projects []ProjectInfo `json:"projects"`
}

// ReloadReply is reload's reply.
type ReloadReply = projects.ReloadResult

// ToolsReply is tools' reply: each tool's Spec with its output schema
// and safety notes, so a gateway over NATS (jido-bus mcp --nats-url) lists
// what an in-process one does.
type ToolsReply struct {
	Tools []tools.Detail `json:"tools"`
	// MCPServers are the states of the project's MCP servers: a server
	// that is restarting keeps its tools listed, and they fail with
	// unavailable until it is ready again.
	MCPServers []mcpclient.State `json:"mcp_servers,omitempty"`
}

// ToolCallRequest is tool.call's body. ID is the caller's id for the call
// (an LLM's tool_use id); empty means a new ULID.
type ToolCallRequest struct {
	Project string          `json:"project"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	ID      string          `json:"id,omitempty"`
}

// ToolCallReply is a successful call's reply (a failed one is the
// reply's error).
type ToolCallReply struct {
	CallID    string              `json:"call_id"`
	Data      json.RawMessage     `json:"data,omitempty"`
	Artifacts []tools.ArtifactRef `json:"artifacts,omitempty"`
	Logs      []string            `json:"logs,omitempty"`
}

// AssetsRequest is assets' body.
type AssetsRequest = projects.AssetsRequest

// AssetsReply is assets' reply.
type AssetsReply = projects.AssetsReply

// DiagnosticsReply is diagnostics' reply.
type DiagnosticsReply struct {
	Diagnostics []assets.Diagnostic `json:"diagnostics"`
}

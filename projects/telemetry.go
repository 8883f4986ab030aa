package projects

import (
	"context"
	"encoding/json"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/gateway"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// The data of the project signals: what is committed to project/<id> and
// emitted on <prefix>.emit.<id>.<type>. Members may be added, never
// renamed (the log keeps them).

// StartedData is project.started's data.
type StartedData struct {
	Root         string          `json:"root"`
	DataDir      string          `json:"data_dir"`
	Policy       json.RawMessage `json:"policy,omitempty"`
	PolicySource string          `json:"policy_source,omitempty"`
	// Protection is what confines run_command on this node (Landlock's
	// ABI and what it enforces), as project get reports it.
	Protection string `json:"protection,omitempty"`
	// Restart is true when the project came back after the node
	// restarted, rather than being opened by a request.
	Restart bool `json:"restart,omitempty"`
}

// AssetCounts are how many assets of each kind a set holds.
type AssetCounts struct {
	Skills    int `json:"skills"`
	Commands  int `json:"commands"`
	Workflows int `json:"workflows"`
	Notes     int `json:"notes"`
}

// AssetsData is the data of project.assets.loaded and
// project.assets.reloaded.
type AssetsData struct {
	Digest  string      `json:"digest"`
	Version uint64      `json:"version"`
	Counts  AssetCounts `json:"counts"`
	// Diagnostics is how many there are; DiagnosticList the first
	// maxListedDiagnostics of them (project diagnostics lists them all).
	Diagnostics    int                 `json:"diagnostics"`
	DiagnosticList []assets.Diagnostic `json:"diagnostic_list,omitempty"`
	// Changes is the diff from the set reported before (reloads only).
	Changes *assets.Changes `json:"changes,omitempty"`
}

// PolicyData is project.policy.changed's data: the policy the project's
// tools run under from this entry on, in the form of .jido/policy.yaml.
type PolicyData struct {
	Policy       json.RawMessage `json:"policy"`
	PolicySource string          `json:"policy_source"`
	// PreviousSource is where the policy before came from.
	PreviousSource string `json:"previous_source,omitempty"`
	// Changes say what differs from the policy before, a line per
	// setting: `tools.run_command: allow -> ask`.
	Changes []string `json:"changes"`
}

// PolicyRefusedData is project.policy.refused's data: the policy file
// was edited into one the project cannot run under (not YAML, an unknown
// key, a bad glob, a symlink, more than the node's operator allows); the
// policy in force stays.
type PolicyRefusedData struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
	// PolicySource is where the policy that stays came from.
	PolicySource string `json:"policy_source"`
}

// maxListedDiagnostics bounds the diagnostics an assets signal carries,
// so a broken project cannot make its own entries too large to commit.
const maxListedDiagnostics = 50

// ToolData is the data of project.tool.started, completed and failed.
type ToolData struct {
	CallID string `json:"call_id"`
	Parent string `json:"parent,omitempty"`
	// Conversation is the conversation whose assistant made the call (its
	// id in the project), or absent for a call from elsewhere (MCP, the
	// project API).
	Conversation string `json:"conversation,omitempty"`
	Tool         string `json:"tool"`
	// Args are the call's arguments (started only) when they are at most
	// maxLoggedArgs bytes; larger ones are left out and ArgsBytes says
	// how large they were.
	Args      json.RawMessage `json:"args,omitempty"`
	ArgsBytes int             `json:"args_bytes,omitempty"`
	// DurationMS is from the call's start to its end (completed, failed).
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Result is "ok" for a completion, the error's type for a failure.
	Result    string              `json:"result,omitempty"`
	Size      int                 `json:"size,omitempty"`
	Artifacts []tools.ArtifactRef `json:"artifacts,omitempty"`
	Error     *tools.Error        `json:"error,omitempty"`
	// Output is what a workflow's step returned (completed, with a
	// Parent): the workflow's progress, from which a restart resumes it.
	Output json.RawMessage `json:"output,omitempty"`
}

// maxLoggedArgs bounds the args a started entry keeps inline.
const maxLoggedArgs = 8 << 10

// ConvData is the data of project.conv.started and project.conv.stopped.
type ConvData struct {
	// Conversation is the conversation's id in the project; ID its agent
	// id, <project-id>/<conversation>.
	Conversation string `json:"conversation"`
	ID           string `json:"id"`
	// Reason is why it stopped (stopped only).
	Reason string `json:"reason,omitempty"`
	// By is who started it, when a gateway did (started only): the A2A
	// task's owner.
	By string `json:"by,omitempty"`
}

// StoppedData is project.stopped's data.
type StoppedData struct {
	Reason string `json:"reason,omitempty"`
}

func toolData(e tools.Event) ToolData {
	d := ToolData{CallID: e.CallID, Parent: e.Parent, Conversation: e.Conversation, Tool: e.Tool}
	if len(e.Args) > 0 {
		if len(e.Args) <= maxLoggedArgs && json.Valid(e.Args) {
			d.Args = e.Args
		} else {
			d.ArgsBytes = len(e.Args)
		}
	}
	if e.Duration > 0 {
		d.DurationMS = float64(e.Duration.Microseconds()) / 1000
	}
	return d
}

func countsOf(s *assets.Snapshot) AssetCounts {
	if s == nil {
		return AssetCounts{}
	}
	c := AssetCounts{Skills: len(s.Skills), Commands: len(s.Commands), Workflows: len(s.Workflows)}
	if s.Graph != nil {
		c.Notes = s.Graph.Len()
	}
	return c
}

// TypeGatewayRequest is the entry a protocol gateway (MCP, A2A) leaves in
// a project's stream for each request that reached the project: who, what,
// and the result.
const TypeGatewayRequest = "project.gateway.request"

// RecordGatewayRequest appends r to project id's stream (and emits it on
// <prefix>.emit.<id>.project.gateway.request), so the project's audit
// trail has every gateway request beside the tool calls it made.
func (e *Engine) RecordGatewayRequest(ctx context.Context, id string, r gateway.Request) error {
	if _, err := e.lookup(id); err != nil {
		return err
	}
	return e.send(ctx, id, TypeGatewayRequest, r)
}

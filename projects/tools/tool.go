package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// Safety says what a tool may do, for people and for policies: read files,
// write files, run programs. It is a declaration shown in the catalog; the
// Sandbox enforces what a tool actually touches.
type Safety struct {
	Reads  bool `json:"reads"`
	Writes bool `json:"writes"`
	Runs   bool `json:"runs"`
}

// Func is a tool's body. It gets the call (args already validated against
// the input schema, the project's Sandbox, a way to log and to call other
// tools) and returns a JSON-marshallable output or an error. It must
// return soon after ctx is done. A *Error (or *bus.Error) in the chain
// gives the failure its type; any other error is of type tool_failed.
type Func func(ctx context.Context, c *Call) (any, error)

// Tool is one entry of a catalog.
type Tool struct {
	// Name is unique in a catalog: 1–128 of a-z A-Z 0-9 and "_.:-". The
	// built-in and asset tools use [A-Za-z0-9_-] only (assets.ToolName),
	// which every MCP client and LLM API takes as is.
	Name        string
	Description string
	// InputSchema and OutputSchema are draft 2020-12 JSON Schemas. The
	// runner validates args against InputSchema; OutputSchema documents
	// the output (the tests check the built-ins against theirs).
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// TextField names the string member of the output that is its text
	// (read_file's content, a skill's body): a client that shows text
	// shows it, with the whole output as structured data beside it.
	TextField string
	Safety    Safety
	// Uses are the tools this one calls (a workflow's steps): the
	// catalog adds their Safety to its own, so a workflow that only
	// reads is offered as read-only, without commands.programs. A tool
	// the catalog lacks counts as doing everything.
	Uses []string
	// Timeout bounds one run; 0 means the runner's default.
	Timeout time.Duration
	// HonoursContext declares that Func returns soon after its ctx is done
	// and never blocks without watching it (or does only bounded work).
	// The runner then calls it on the caller's goroutine, saving the
	// watchdog goroutine that lets a call return at its timeout while a
	// tool that ignores its context still runs. The built-ins set it.
	HonoursContext bool
	Func           Func
	// resumable: the tool goes on from a Call's done steps (a workflow's),
	// so Runner.Resume may take up a call of it.
	resumable bool
}

// Call is what a running tool sees. It is owned by one run; Logf is safe
// from the goroutines the tool starts.
type Call struct {
	// ID identifies this call (the caller's, or a ULID the runner made).
	ID string
	// Parent is the ID of the call that made this one (a workflow's), or "".
	Parent string
	// Name is the tool's name; file operations pass it to the Sandbox so
	// path rules and refusals name the tool.
	Name string
	// Args are the call's arguments, valid against the input schema.
	Args    json.RawMessage
	Sandbox *policy.Sandbox

	runner *Runner
	// conversation is the ToolCall's Conversation, for the calls this
	// one makes.
	conversation string
	// mode is the permission mode the calls this one makes run under
	// (modeFor the call's own).
	mode string
	// within is the ToolCall's Within, for the calls this one makes.
	within func(*policy.Sandbox) (*policy.Sandbox, error)
	// done are the steps a resumed workflow call ran before the node
	// stopped (Runner.Resume); nil for any other call.
	done []assets.StepOutput
	// changes collects the files this call (and its workflow) wrote.
	changes *fileChanges
	mu      sync.Mutex
	logs    []string
}

// maxLogs bounds the log lines one call keeps.
const maxLogs = 100

// Logf records a line in the result's logs (at most maxLogs are kept).
func (c *Call) Logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.logs) < maxLogs {
		c.logs = append(c.logs, fmt.Sprintf(format, args...))
	} else if len(c.logs) == maxLogs {
		c.logs = append(c.logs, "(more log lines dropped)")
	}
}

func (c *Call) takeLogs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs
}

// Run calls another tool through the same runner, as a child of this call:
// it is validated, authorized, timed and observed like any call, but runs
// in this call's concurrency slot (a workflow holding the only slot must
// still be able to run its steps).
func (c *Call) Run(ctx context.Context, tc ToolCall) (Result, error) {
	tc.Conversation, tc.Mode, tc.Within = c.conversation, c.mode, c.within
	return c.runner.run(ctx, tc, c.ID, false)
}

// decodeArgs decodes the (already validated) args into v.
func decodeArgs(c *Call, v any) error {
	if len(c.Args) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.Args, v); err != nil {
		return Errorf(ReasonInvalidArgs, "%s: args: %v", c.Name, err)
	}
	return nil
}

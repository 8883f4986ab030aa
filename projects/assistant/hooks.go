package assistant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/conversation"
)

// DefaultHookTimeoutMS is how long a hook has to answer when the project
// sets no hooks.timeout_ms.
const DefaultHookTimeoutMS = 5000

// maxHookTimeoutMS bounds hooks.timeout_ms: a tool call waits for its
// hook, and a hook that never answers must not hold a turn for hours.
const maxHookTimeoutMS = 5 * 60 * 1000

// HookSettings are a project's hooks (hooks: in .jido/config.yaml). With
// no events nothing is asked and nothing costs anything.
//
//	hooks:
//	  events: [tool.before, tool.after]
//	  timeout_ms: 2000
//	  default: deny           # on timeout or no responder: allow or deny (default deny)
//	  command: [/usr/local/bin/team-check]  # a local program instead of a NATS service
type HookSettings struct {
	Events    []string `yaml:"events"`
	TimeoutMS int64    `yaml:"timeout_ms"`
	Default   string   `yaml:"default"`
	// Command, when set, is the hook: a program run under the project's
	// sandbox exactly as run_command runs one (its commands allow-list,
	// confinement and limits), the request JSON on its stdin, the reply
	// JSON on its stdout; a non-zero exit denies with its stderr's first
	// line. Without it the hook is asked on NATS.
	Command []string `yaml:"command"`
}

// Check says what is wrong with the hooks a project configured.
func (h HookSettings) Check() error {
	for _, e := range h.Events {
		if !slices.Contains(conversation.HookEvents(), e) {
			return fmt.Errorf("hooks.events: %q is not a hook point; use %s", e, strings.Join(conversation.HookEvents(), " or "))
		}
	}
	if h.TimeoutMS < 0 || h.TimeoutMS > maxHookTimeoutMS {
		return fmt.Errorf("hooks.timeout_ms: %d is out of range; give 1 to %d milliseconds (default %d)", h.TimeoutMS, maxHookTimeoutMS, DefaultHookTimeoutMS)
	}
	switch h.Default {
	case "", conversation.HookAllow, conversation.HookDeny:
	default:
		return fmt.Errorf("hooks.default: %q is neither allow nor deny (what a call gets when no hook answers in time; default deny)", h.Default)
	}
	if h.Command != nil && (len(h.Command) == 0 || h.Command[0] == "") {
		return fmt.Errorf("hooks.command: give the program and its arguments, e.g. [./hooks/check, --strict]")
	}
	return nil
}

func (h HookSettings) on(event string) bool { return slices.Contains(h.Events, event) }

func (h HookSettings) timeout() time.Duration {
	if h.TimeoutMS <= 0 {
		return DefaultHookTimeoutMS * time.Millisecond
	}
	return time.Duration(h.TimeoutMS) * time.Millisecond
}

// fallback is the decision when no hook answered: the project's default,
// deny unless it says allow (a team that hooks a point wants it held).
func (h HookSettings) fallback() string {
	if h.Default == conversation.HookAllow {
		return conversation.HookAllow
	}
	return conversation.HookDeny
}

// HookRequest is what a hook is asked (the JSON of a NATS request on
// jido.hook.<project>.<event>, or of a local command's stdin).
type HookRequest struct {
	Event        string          `json:"event"`
	Project      string          `json:"project"`
	Conversation string          `json:"conversation"`
	CallID       string          `json:"call_id,omitempty"`
	Tool         string          `json:"tool,omitempty"`
	Args         json.RawMessage `json:"args,omitempty"`
	Mode         string          `json:"mode,omitempty"`
	// Outcome is the call's outcome (tool.after): completed with its
	// output, or failed with its error.
	Outcome *HookOutcome `json:"outcome,omitempty"`
}

// HookOutcome is a tool call's outcome as a tool.after hook sees it.
type HookOutcome struct {
	Status string          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  any             `json:"error,omitempty"`
}

// HookReply is a hook's answer.
type HookReply struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Args, for tool.before, replaces the call's arguments. The runner
	// validates them against the tool's input schema and holds the call
	// to the policy and the conversation's mode like any other.
	Args json.RawMessage `json:"args,omitempty"`
	// By names who answered (the service says so; NATS does not).
	By string `json:"by,omitempty"`
}

// ErrNoHook is what a HookAsker returns when no one answered: no
// responder, or none in time (wrapped with which).
var ErrNoHook = errors.New("no hook answered")

// HookAsker asks a NATS hook service: request on the node's
// jido.hook.<project>.<event> subject, within timeout. It returns the
// reply and the subject asked; no responder or no answer in time is an
// error wrapping ErrNoHook.
type HookAsker func(ctx context.Context, project, event string, req []byte, timeout time.Duration) ([]byte, string, error)

// HookRunner runs a local command hook under project's sandbox, stdin
// on its standard input: its stdout, its stderr and its exit code, or an
// error when it could not run (refused by the policy, not found, timed
// out).
type HookRunner func(ctx context.Context, project string, argv []string, stdin []byte, timeout time.Duration) (stdout, stderr []byte, exit int, err error)

// hookDecision is a hook's decision as conversation.hook.decided records it.
type hookDecision struct {
	CallID   string          `json:"call_id,omitempty"`
	Hook     string          `json:"hook"`
	Decision string          `json:"decision"`
	Reason   string          `json:"reason,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	By       string          `json:"by,omitempty"`
	// Via is where the hook was asked: the NATS subject, or the command.
	Via string `json:"via"`
	// Defaulted: no hook answered (no responder, timeout, an unusable
	// reply or a command that could not run); Decision is the project's
	// hooks.default and Reason says why.
	Defaulted bool `json:"defaulted,omitempty"`
}

// askHook asks the project's hook at event and returns its decision (the
// project's default, stated, when none answers).
func (a *Assistant) askHook(ctx context.Context, h HookSettings, project string, req HookRequest) hookDecision {
	d := hookDecision{CallID: req.CallID, Hook: req.Event}
	body, err := json.Marshal(req)
	if err != nil {
		return a.hookDefault(h, d, fmt.Sprintf("the hook request could not be encoded: %v", err))
	}
	var out []byte
	if len(h.Command) > 0 {
		d.Via = "command " + strings.Join(h.Command, " ")
		if a.cfg.RunHook == nil {
			return a.hookDefault(h, d, "this node runs no command hooks")
		}
		stdout, stderr, exit, err := a.cfg.RunHook(ctx, project, h.Command, body, h.timeout())
		switch {
		case err != nil:
			return a.hookDefault(h, d, fmt.Sprintf("the hook command did not run: %v", err))
		case exit != 0:
			d.Decision, d.By = conversation.HookDeny, d.Via
			d.Reason, _, _ = strings.Cut(strings.TrimSpace(string(stderr)), "\n")
			if d.Reason == "" {
				d.Reason = fmt.Sprintf("the hook command exited %d", exit)
			}
			return d
		}
		out = stdout
	} else {
		if a.cfg.AskHook == nil {
			return a.hookDefault(h, d, "this node has no bus to ask hooks on")
		}
		reply, subject, err := a.cfg.AskHook(ctx, project, req.Event, body, h.timeout())
		d.Via = subject
		if err != nil {
			return a.hookDefault(h, d, err.Error())
		}
		out = reply
	}
	var r HookReply
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return a.hookDefault(h, d, fmt.Sprintf("the hook's reply is not JSON {\"decision\":\"allow\"|\"deny\",...}: %v", err))
	}
	switch r.Decision {
	case conversation.HookAllow, conversation.HookDeny:
	default:
		return a.hookDefault(h, d, fmt.Sprintf("the hook answered decision %q, neither allow nor deny", r.Decision))
	}
	d.Decision, d.Reason, d.By = r.Decision, r.Reason, r.By
	if d.By == "" {
		d.By = d.Via
	}
	if len(r.Args) > 0 && string(r.Args) != "null" && r.Decision == conversation.HookAllow {
		if req.Event != conversation.HookToolBefore {
			return a.hookDefault(h, d, "the hook rewrote arguments, which only a tool.before hook may")
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(r.Args, &obj) != nil {
			// The tool's input schema is an object; anything else is
			// refused rather than passed on.
			d.Decision, d.Reason = conversation.HookDeny, "the hook rewrote the arguments into something that is not a JSON object"
			return d
		}
		d.Args = r.Args
	}
	return d
}

func (a *Assistant) hookDefault(h HookSettings, d hookDecision, why string) hookDecision {
	d.Decision, d.Defaulted = h.fallback(), true
	d.Reason = fmt.Sprintf("%s; the project's hooks.default is %s", why, d.Decision)
	return d
}

// hookBefore asks the tool.before hook about call c and records its
// decision; the loop reads it and runs the call (as rewritten) or fails
// it.
func (a *Assistant) hookBefore(ctx context.Context, x *runtime.ExecContext, h HookSettings, c conversation.RunTool) {
	project := projectOf(c.Conversation)
	d := a.askHook(ctx, h, project, HookRequest{Event: conversation.HookToolBefore, Project: project, Conversation: c.Conversation,
		CallID: c.CallID, Tool: c.Name, Args: rawArgs(c.Args), Mode: c.Mode})
	if cancelledByTurn(ctx) {
		a.deliver(x, conversation.ToolCancelled, "tool."+c.CallID+".cancelled", c.CallID, map[string]any{"call_id": c.CallID, "reason": "the turn was cancelled while its hook was asked"})
		return
	}
	if ctx.Err() != nil {
		return // the node is closing: the restart records the call interrupted
	}
	a.deliver(x, conversation.HookDecided, "hook."+c.CallID+".before", c.CallID, d)
}

// hookAfter asks the tool.after hook about call c's outcome and records
// its decision. It reports whether the outcome stands; denied, the caller
// records the call failed hook_denied instead.
func (a *Assistant) hookAfter(ctx context.Context, x *runtime.ExecContext, h HookSettings, c conversation.RunTool, out HookOutcome) (bool, string) {
	project := projectOf(c.Conversation)
	d := a.askHook(ctx, h, project, HookRequest{Event: conversation.HookToolAfter, Project: project, Conversation: c.Conversation,
		CallID: c.CallID, Tool: c.Name, Args: rawArgs(c.Args), Mode: c.Mode, Outcome: &out})
	a.deliver(x, conversation.HookDecided, "hook."+c.CallID+".after", c.CallID, d)
	return d.Decision == conversation.HookAllow, d.Reason
}

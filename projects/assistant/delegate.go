package assistant

import (
	"context"
	"encoding/json"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// DelegateCall is a delegate tool call the assistant hands to
// Config.Delegate: the parent conversation's key, the call, its
// arguments (DelegateArgs), the parent's permission mode and what is
// left of its budget (nil: none).
type DelegateCall struct {
	Conversation string
	CallID       string
	Args         json.RawMessage
	Mode         string
	Budget       *conversation.Budget
	// Recovered: the call was found again after a crash. Delegate then
	// only waits for a child that had started, and fails the call
	// interrupted otherwise (it may have been waiting for a person's
	// approval, which a restart must not skip).
	Recovered bool
}

// DelegateArgs are the delegate tool's arguments.
type DelegateArgs struct {
	Task     string    `json:"task"`
	Tools    *[]string `json:"tools,omitempty"`
	MaxSteps int       `json:"max_steps,omitempty"`
	Mode     string    `json:"mode,omitempty"`
}

// DelegateResult is a child conversation's outcome: its id in the
// project (empty when it was refused before it started), its final
// answer, what it spent, and the error that ended it without an answer.
type DelegateResult struct {
	Child   string
	Answer  string
	Usage   conversation.Usage
	CostUSD float64
	Err     *tools.Error
}

// delegateInput is the delegate tool's input schema.
const delegateInput = `{
  "type": "object",
  "required": ["task"],
  "additionalProperties": false,
  "properties": {
    "task": {"type": "string", "minLength": 1, "description": "what the child conversation is to do: its first message; it sees nothing else of this conversation"},
    "tools": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": true, "description": "the tools the child may call, among this conversation's own; absent: all of them, [] none"},
    "max_steps": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "the most LLM calls the child's turn may make (its limits.max_steps; absent: 25)"},
    "mode": {"enum": ["plan", "ask", "auto"], "description": "the child's permission mode, no looser than this conversation's (absent: this conversation's)"}
  }
}`

const delegateOutput = `{
  "type": "object",
  "required": ["conversation", "answer"],
  "properties": {
    "conversation": {"type": "string", "description": "the child conversation's id in the project (conv show <project>/<id>)"},
    "answer": {"type": "string", "description": "the child's final answer"}
  }
}`

// DelegateTool is the delegate tool's catalog entry. The assistant runs
// it (Config.Delegate) and never the runner: its Func refuses a call
// from anywhere else (MCP, project call), which has no conversation to
// delegate from. It declares it reads and writes, as the tools it may
// hand on do, so a plan conversation never delegates and an ask
// conversation asks a person first; it does not declare it runs, which
// would hide it in every project whose policy names no programs
// (run_command, when the policy lets it be handed on, is held to the
// policy in the child like any call).
func DelegateTool() tools.Tool {
	return tools.Tool{
		Name:         conversation.DelegateTool,
		Description:  "Hand a self-contained task to a child conversation, with a subset of your tools and a step limit; returns its final answer. Use it for work that needs many steps of its own (a search, a review) so your context keeps only the answer.",
		InputSchema:  json.RawMessage(delegateInput),
		OutputSchema: json.RawMessage(delegateOutput),
		TextField:    "answer",
		Safety:       tools.Safety{Reads: true, Writes: true},
		Func: func(context.Context, *tools.Call) (any, error) {
			return nil, tools.Errorf(conversation.ReasonDelegation, "delegate runs only in a conversation of the project's assistant (it starts a child conversation of the calling one); start one with conv start, or call the tools themselves")
		},
		HonoursContext: true,
	}
}

// runDelegate runs a delegate call through Config.Delegate and records
// its outcome, which names the child (data.conversation_id) and carries
// what the child spent (usage, cost_usd), which the loop counts toward
// the parent's budget. A call found again after a crash goes the same
// way: Delegate finds the child it started and waits for its answer.
func (a *Assistant) runDelegate(ctx context.Context, x *runtime.ExecContext, c conversation.RunTool) {
	if !x.Recovered {
		a.deliver(x, conversation.ToolStarted, "tool."+c.CallID+".started", c.CallID, map[string]any{"call_id": c.CallID})
	}
	res := a.cfg.Delegate(ctx, DelegateCall{Conversation: c.Conversation, CallID: c.CallID, Args: rawArgs(c.Args), Mode: c.Mode, Budget: c.Budget, Recovered: x.Recovered})
	if ctx.Err() != nil && !cancelledByTurn(ctx) {
		return // the node is closing: the restart takes the call up again
	}
	typ, id, data := delegateOutcome(c.CallID, res, cancelledByTurn(ctx))
	a.deliver(x, typ, id, c.CallID, data)
}

// DelegationSettings bound delegation in a project (delegation: in
// .jido/config.yaml); a zero member takes its default.
type DelegationSettings struct {
	// MaxDepth is how deep delegation goes: 1 lets a conversation a
	// person started delegate, 2 (the default) lets its children delegate
	// too.
	MaxDepth int `yaml:"max_depth"`
	// MaxFanout is how many children one conversation may have working
	// at once (default 4).
	MaxFanout int `yaml:"max_fanout"`
}

// Defaults and bounds of DelegationSettings.
const (
	DefaultDelegationDepth  = 2
	DefaultDelegationFanout = 4
	MaxDelegationDepth      = 8
	MaxDelegationFanout     = 64
)

// WithDefaults returns d with its zero members set to their defaults.
func (d DelegationSettings) WithDefaults() DelegationSettings {
	if d.MaxDepth == 0 {
		d.MaxDepth = DefaultDelegationDepth
	}
	if d.MaxFanout == 0 {
		d.MaxFanout = DefaultDelegationFanout
	}
	return d
}

// Check refuses bounds out of range, naming the setting.
func (d DelegationSettings) Check() error {
	if d.MaxDepth < 0 || d.MaxDepth > MaxDelegationDepth {
		return bus.Errorf(bus.ReasonInvalidRequest, "delegation.max_depth %d: give 1 to %d (or leave it out: %d)", d.MaxDepth, MaxDelegationDepth, DefaultDelegationDepth)
	}
	if d.MaxFanout < 0 || d.MaxFanout > MaxDelegationFanout {
		return bus.Errorf(bus.ReasonInvalidRequest, "delegation.max_fanout %d: give 1 to %d (or leave it out: %d)", d.MaxFanout, MaxDelegationFanout, DefaultDelegationFanout)
	}
	return nil
}

// TurnCancelled reports whether ctx, a delegate call's, ended because
// its conversation's turn was cancelled (rather than the node closing).
func TurnCancelled(ctx context.Context) bool { return cancelledByTurn(ctx) }

// delegateOutcome is the event that answers delegate call callID: its
// type, id and data. It names the child (data.conversation_id) and
// carries what the child spent (usage, cost_usd), which the loop counts
// toward the parent's budget.
func delegateOutcome(callID string, res DelegateResult, cancelled bool) (string, string, map[string]any) {
	data := map[string]any{"call_id": callID}
	if res.Child != "" {
		data["conversation_id"] = res.Child
	}
	if res.Usage != (conversation.Usage{}) {
		data["usage"] = res.Usage
	}
	if res.CostUSD > 0 {
		data["cost_usd"] = res.CostUSD
	}
	switch {
	case res.Err == nil:
		data["output"] = map[string]any{"conversation": res.Child, "answer": res.Answer}
		return conversation.ToolCompleted, "tool." + callID + ".completed", data
	case cancelled:
		return conversation.ToolCancelled, "tool." + callID + ".cancelled", map[string]any{"call_id": callID, "reason": "the turn was cancelled while the child conversation worked"}
	default:
		data["error"] = bus.Errorf(res.Err.Type, "%s", res.Err.Message)
		return conversation.ToolFailed, "tool." + callID + ".failed", data
	}
}

// ResumeDelegate waits again, after a restart, for the answer of the
// child of delegate call callID of conversation key, which was running
// when the node stopped (the resume leaves such a call open), and hands
// its outcome to deliver. A child that never started fails the call
// interrupted. It is work of the assistant: CancelTurn and Close stop it.
func (a *Assistant) ResumeDelegate(key, callID string, deliver func(bus.Signal) error) {
	if a.cfg.Delegate == nil {
		return
	}
	a.start(key, callID, func(ctx context.Context) {
		res := a.cfg.Delegate(ctx, DelegateCall{Conversation: key, CallID: callID, Recovered: true})
		if ctx.Err() != nil && !cancelledByTurn(ctx) {
			return // closing again: the next start takes it up
		}
		typ, id, data := delegateOutcome(callID, res, cancelledByTurn(ctx))
		sig, err := newEvent(key, typ, id, callID, data)
		if err == nil {
			err = deliver(sig)
		}
		if err != nil {
			a.log.Warn("delegate outcome not delivered", "conversation", key, "call", callID, "err", err)
		}
	})
}

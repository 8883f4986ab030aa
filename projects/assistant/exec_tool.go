package assistant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// execRunTool runs one tool call through the project's runner on its own
// goroutine and returns async; the outcome comes back as events. A call
// the policy (or the conversation's ask mode) asks a person about, and
// nobody approved yet, becomes conversation.tool.approval.requested
// instead. The call carries the conversation's permission mode to the
// runner, which holds it to it.
//
// A call found again after a crash (the runtime re-runs a directive whose
// outcome it had not recorded) is not run again: it may have had its
// effects already. It is recorded failed, interrupted, and the model
// hears so.
func (a *Assistant) execRunTool(_ context.Context, d agents.Directive, x *runtime.ExecContext) (runtime.ExecResult, error) {
	c := d.(conversation.RunTool)
	if c.Name == conversation.DelegateTool && a.cfg.Delegate != nil && x.Recovered {
		// The child conversation resumes as every conversation does; the
		// call waits for its answer again.
		a.start(c.Conversation, c.CallID, func(ctx context.Context) { a.runDelegate(ctx, x, c) })
		return runtime.ExecResult{Kind: runtime.ExecAsync}, nil
	}
	if x.Recovered {
		a.deliver(x, conversation.ToolFailed, "interrupted."+c.CallID, c.CallID, map[string]any{
			"call_id": c.CallID,
			"error":   bus.Errorf(conversation.ReasonInterrupted, "tool call %s (%s) did not finish: the node stopped while it ran; it is not run again because it may have had effects", c.CallID, c.Name),
		})
		return runtime.ExecResult{}, nil
	}
	a.start(c.Conversation, c.CallID, func(ctx context.Context) {
		project := projectOf(c.Conversation)
		ask, why, err := a.cfg.Host.NeedsApproval(ctx, project, c.Name, c.Mode)
		if te, ok := errors.AsType[*tools.Error](err); ok && te.Type == tools.ReasonPlanMode {
			// Refused by the conversation's mode: never started.
			a.deliver(x, conversation.ToolFailed, "tool."+c.CallID+".failed", c.CallID, map[string]any{
				"call_id": c.CallID, "error": bus.Errorf(te.Type, "%s", te.Message),
			})
			return
		}
		hooks, ok := a.hooks(ctx, x, c)
		if !ok {
			return
		}
		if !c.Hooked && hooks.on(conversation.HookToolBefore) {
			// The loop runs the call again, Hooked, once it reads the
			// decision; after the mode's check above, so a call the mode
			// refuses never reaches a hook, and before the policy's ask, so
			// a person approves the arguments that will run.
			a.hookBefore(ctx, x, hooks, c)
			return
		}
		if !c.Approved && err == nil && ask {
			a.askApproval(ctx, x, c, why)
			return
		}
		if c.Name == conversation.DelegateTool && a.cfg.Delegate != nil {
			a.runDelegate(ctx, x, c)
			return
		}
		a.runTool(ctx, x, c, project, hooks)
	})
	return runtime.ExecResult{Kind: runtime.ExecAsync}, nil
}

func (a *Assistant) askApproval(ctx context.Context, x *runtime.ExecContext, c conversation.RunTool, why string) {
	timeout := conversation.DefaultApprovalTimeout.Milliseconds()
	if s, _, err := a.cfg.Host.Settings(ctx, projectOf(c.Conversation)); err == nil && s.ApprovalTimeoutMS > 0 {
		timeout = s.ApprovalTimeoutMS
	}
	a.deliver(x, conversation.ToolApprovalRequested, "approval."+c.CallID+".requested", c.CallID, map[string]any{
		"call_id": c.CallID, "name": c.Name, "args": rawArgs(c.Args), "reason": why, "timeout_ms": timeout,
	})
}

func (a *Assistant) runTool(ctx context.Context, x *runtime.ExecContext, c conversation.RunTool, project string, hooks HookSettings) {
	a.deliver(x, conversation.ToolStarted, "tool."+c.CallID+".started", c.CallID, map[string]any{"call_id": c.CallID})
	start := time.Now()
	res, err := a.cfg.Host.CallTool(ctx, project, tools.ToolCall{ID: c.CallID, Name: c.Name, Args: rawArgs(c.Args), Approved: c.Approved, Conversation: convOf(c.Conversation), Mode: c.Mode})
	took := time.Since(start)
	if ctx.Err() != nil && !cancelledByTurn(ctx) {
		return // the node is closing: the restart records the call interrupted
	}
	if err == nil {
		data := map[string]any{"call_id": c.CallID, "duration_ms": took.Milliseconds()}
		if len(res.Artifacts) > 0 {
			data["output_ref"] = res.Artifacts[0]
		} else {
			data["output"] = rawArgs(res.Data)
		}
		if len(res.Changes) > 0 {
			// Which files this step changed, and from what: conv rewind
			// reads them back from the log.
			data["files"] = res.Changes
		}
		if hooks.on(conversation.HookToolAfter) && !a.afterAllows(ctx, x, hooks, c, HookOutcome{Status: "completed", Output: rawArgs(res.Data)}) {
			return
		}
		a.deliver(x, conversation.ToolCompleted, "tool."+c.CallID+".completed", c.CallID, data)
		return
	}
	te := &tools.Error{Type: tools.ReasonToolFailed, Message: err.Error()}
	if e, ok := errors.AsType[*tools.Error](err); ok {
		te = e
	} else if be, ok := errors.AsType[*bus.Error](err); ok {
		te = &tools.Error{Type: be.Type, Message: be.Message}
	}
	switch {
	case cancelledByTurn(ctx) || te.Type == tools.ReasonCancelled:
		a.deliver(x, conversation.ToolCancelled, "tool."+c.CallID+".cancelled", c.CallID, map[string]any{"call_id": c.CallID, "reason": "the turn was cancelled while the tool ran"})
	case te.Type == tools.ReasonTimeout:
		a.deliver(x, conversation.ToolTimeout, "tool."+c.CallID+".timeout", c.CallID, map[string]any{"call_id": c.CallID, "timeout_ms": took.Milliseconds()})
	case te.Type == tools.ReasonApprovalRequired && !c.Approved:
		a.askApproval(ctx, x, c, te.Message)
	default:
		if hooks.on(conversation.HookToolAfter) && !a.afterAllows(ctx, x, hooks, c, HookOutcome{Status: "failed", Error: bus.Errorf(te.Type, "%s", te.Message)}) {
			return
		}
		a.deliver(x, conversation.ToolFailed, "tool."+c.CallID+".failed", c.CallID, map[string]any{
			"call_id": c.CallID, "error": bus.Errorf(te.Type, "%s", te.Message), "duration_ms": took.Milliseconds(),
		})
	}
}

// hooks returns the project's hooks for call c; when its settings cannot
// be read the call is recorded failed (a hook the project configured is
// never skipped for want of reading it) and ok is false.
func (a *Assistant) hooks(ctx context.Context, x *runtime.ExecContext, c conversation.RunTool) (HookSettings, bool) {
	s, _, err := a.cfg.Host.Settings(ctx, projectOf(c.Conversation))
	if err != nil {
		a.deliver(x, conversation.ToolFailed, "tool."+c.CallID+".failed", c.CallID, map[string]any{
			"call_id": c.CallID, "error": bus.Errorf(conversation.ReasonConfig, "not run: the project's settings, which say which hooks to ask, cannot be read: %v", err),
		})
		return HookSettings{}, false
	}
	return s.Hooks, true
}

// afterAllows asks the tool.after hook about c's outcome; denied, it
// records the call failed hook_denied in place of the outcome, which the
// model then never reads.
func (a *Assistant) afterAllows(ctx context.Context, x *runtime.ExecContext, hooks HookSettings, c conversation.RunTool, out HookOutcome) bool {
	ok, why := a.hookAfter(ctx, x, hooks, c, out)
	if ok {
		return true
	}
	msg := fmt.Sprintf("a hook denied the outcome of %s", c.Name)
	if why != "" {
		msg += ": " + why
	}
	a.deliver(x, conversation.ToolFailed, "tool."+c.CallID+".failed", c.CallID, map[string]any{"call_id": c.CallID, "error": bus.Errorf(conversation.ReasonHookDenied, "%s", msg)})
	return false
}

package conversation

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// reasonInvalidArgs is the error type of a tool call whose arguments are
// not valid JSON, which the loop fails without running it.
const reasonInvalidArgs = "invalid_args"

const (
	// MaxAttempts is how many attempts an LLM call gets before the turn
	// fails.
	MaxAttempts = 5
	// DefaultApprovalTimeout is how long a call waits for a person before
	// it is denied.
	DefaultApprovalTimeout = 5 * time.Minute
)

// loopState is the loop's part of the conversation agent's state (under
// "loop"): where the turn stands. It is small and transient: a call's
// arguments are kept only until it has run.
type loopState struct {
	// On is set by a conversation.started with "assistant": true (a
	// conversation of a project); a conversation without it is driven
	// from outside and the loop decides nothing.
	On bool `json:"on,omitempty"`
	// Version is the loop version the conversation was started under
	// (conversation.LoopVersion then; 0 and 1 are the first).
	Version int `json:"version,omitempty"`
	// Copied counts the parent's events a fork still hands over: the
	// loop folds them into its state but acts on none of them (they were
	// acted on in the parent).
	Copied int `json:"copied,omitempty"`
	// Turn is the id of the user message the turn answers; "" when idle.
	Turn    string `json:"turn,omitempty"`
	Step    int    `json:"step,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Request is the LLM call in flight (its conversation.llm.requested
	// id), from the moment it is decided.
	Request string `json:"request,omitempty"`
	// Calls counts the tool calls of the turn.
	Calls int `json:"calls,omitempty"`
	// Pending are the turn's tool calls without an outcome.
	Pending map[string]*call `json:"pending,omitempty"`
	// Ending names why the turn ends once its pending calls are answered
	// (max_tool_calls), instead of asking the model again.
	Ending string `json:"ending,omitempty"`
	// Queued is a user message that came during the turn; it starts the
	// next turn if the model's last answer does not already follow it.
	Queued string `json:"queued,omitempty"`
	// Approved lists the tools a person approved for the conversation.
	Approved map[string]bool `json:"approved,omitempty"`
	Limits   Limits          `json:"limits,omitzero"`
	LLM      *LLMConfig      `json:"llm,omitempty"`
	// ApprovalTimeoutMS is how long a call waits for a person (0: the
	// default).
	ApprovalTimeoutMS int64 `json:"approval_timeout_ms,omitempty"`
	// Budget is the conversation's (nil: none); Used is what its own
	// LLM calls used, counted only under a budget; Exceeded names the
	// total that reached its limit (BudgetTokens or BudgetCost), "" while
	// the budget holds.
	Budget   *Budget    `json:"budget,omitempty"`
	Used     budgetUsed `json:"used,omitzero"`
	Exceeded string     `json:"exceeded,omitempty"`
	// Mode is the conversation's permission mode ("" is ModeAuto), set
	// by conversation.started and conversation.mode; each RunTool
	// carries it, and the runner holds the call to it.
	Mode string `json:"mode,omitempty"`
	// Tools are the tools a delegated conversation may call (nil: every
	// tool; see loop_delegate.go).
	Tools *[]string `json:"tools,omitempty"`
	// Compact is where compaction stands (loop_compact.go).
	Compact compactState `json:"compact,omitzero"`
}

// budgetUsed is what a conversation's LLM calls used.
type budgetUsed struct {
	Tokens  int64   `json:"tokens,omitempty"`
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// call is one pending tool call.
type call struct {
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args,omitempty"`
	Index int             `json:"index"`
	// State: requested (answered by the model, not yet run), running,
	// approval (waiting for a person), closing (its outcome is being
	// recorded by the loop itself).
	State    string `json:"state"`
	ArgsErr  string `json:"args_error,omitempty"`
	Approved bool   `json:"approved,omitempty"`
	// Hooked: the project's tool.before hook allowed the call (Args are
	// then the hook's, if it rewrote them); it is not asked again.
	Hooked bool `json:"hooked,omitempty"`
}

const (
	callRequested = "requested"
	callRunning   = "running"
	callApproval  = "approval"
	callClosing   = "closing"
)

// eventData holds the members of conversation events the loop reads.
type eventData struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	ArgsError string          `json:"args_error"`
	Decision  string          `json:"decision"`
	Remember  string          `json:"remember"`
	By        string          `json:"by"`
	Reason    string          `json:"reason"`
	Retryable bool            `json:"retryable"`
	RetryInMS int64           `json:"retry_in_ms"`
	TimeoutMS int64           `json:"timeout_ms"`
	Error     *bus.Error      `json:"error"`
	Limits    *Limits         `json:"limits"`
	Assistant bool            `json:"assistant"`
	Loop      int             `json:"loop"`
	History   int             `json:"history"`
	LLM       *LLMConfig      `json:"llm"`
	Budget    *Budget         `json:"budget"`
	Usage     *Usage          `json:"usage"`
	CostUSD   float64         `json:"cost_usd"`
	Mode      string          `json:"mode"`
	Tools     *[]string       `json:"tools"`
	Hook      string          `json:"hook"`
}

// loopEvent is what the loop reads of a conversation event.
type loopEvent struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	Time        time.Time `json:"time"`
	CausationID string    `json:"causationid"`
	Data        eventData `json:"data"`
}

// Loop is the conversation loop (a LoopFunc, the one NewAgent uses): after each
// event it decides, from the conversation's state alone, the next step —
// an LLM call, tool runs, or the end of the turn. It is pure.
func Loop(env agents.Env, whole json.RawMessage) (agents.Result, error) {
	var ev loopEvent
	if err := json.Unmarshal(whole, &ev); err != nil {
		return agents.Result{}, fmt.Errorf("conversation loop: %w", err)
	}
	raw, _ := env.State.Get("loop")
	st, err := agents.Decode[loopState](raw)
	if err != nil {
		return agents.Result{}, fmt.Errorf("conversation loop state: %w", err)
	}
	copied := st.Copied > 0 && ev.Type != Started
	d := decider{key: env.AgentID, st: &st, ev: &ev, status: env.State.String("status"), copied: copied}
	d.decide(whole)
	if copied {
		st.Copied--
		d.out = nil
	}
	return agents.Result{
		Ops:        []agents.StateOp{agents.SetPath{Path: []string{"loop"}, Value: st}},
		Directives: d.out,
	}, nil
}

// decider is one decision of the loop.
type decider struct {
	key    string
	st     *loopState
	ev     *loopEvent
	status string
	// copied: the event is a fork's copy of its parent's, folded and not
	// acted on.
	copied bool
	out    []agents.Directive
}

func (d *decider) decide(whole json.RawMessage) {
	st, ev := d.st, d.ev
	if !st.On && ev.Type != Started {
		return
	}
	if d.compactEvent(whole) {
		return
	}
	switch ev.Type {
	case Started:
		st.On = ev.Data.Assistant
		st.Version = ev.Data.Loop
		st.Copied = ev.Data.History
		if ev.Data.Limits != nil {
			st.Limits = *ev.Data.Limits
		}
		st.LLM = ev.Data.LLM
		st.Budget = ev.Data.Budget
		st.Mode = d.mode()
		st.Tools = ev.Data.Tools
	case ModeChanged:
		// It holds for the calls started after it, this turn's pending
		// ones too; a call running or waiting for a person keeps the mode
		// it was started with (an approval runs it under the new one).
		st.Mode = d.mode()
	case UserMessage:
		if d.status == "stopped" {
			return
		}
		if st.Turn == "" {
			d.startTurn(ev.ID)
			return
		}
		st.Queued = ev.ID
	case ToolRequested:
		if !d.current() || ev.Data.CallID == "" {
			return
		}
		if st.Pending == nil {
			st.Pending = map[string]*call{}
		}
		if _, dup := st.Pending[ev.Data.CallID]; dup {
			return
		}
		st.Calls++
		st.Pending[ev.Data.CallID] = &call{Name: ev.Data.Name, Args: ev.Data.Args, Index: st.Calls, State: callRequested, ArgsErr: ev.Data.ArgsError}
	case LLMCompleted:
		d.spend()
		if !d.current() {
			return
		}
		st.Request = ""
		if d.budgetReached() {
			d.budgetSpent()
			return
		}
		d.answered()
	case LLMFailed:
		if !d.current() {
			return
		}
		st.Request = ""
		d.llmFailed()
	case ToolApprovalRequested:
		c := d.pending(ev.Data.CallID)
		if c == nil || c.State != callRunning {
			return
		}
		c.State = callApproval
		timeout := time.Duration(ev.Data.TimeoutMS) * time.Millisecond
		if timeout <= 0 {
			timeout = DefaultApprovalTimeout
		}
		d.out = append(d.out, agents.Schedule{Delay: timeout, Signal: d.signal(ToolApproval, approvalTimeoutID(ev.Data.CallID), ev.Data.CallID,
			map[string]any{"call_id": ev.Data.CallID, "decision": DecisionDeny, "reason": "timeout", "by": "jido"})})
		d.runWaiting()
	case ToolApproval:
		d.approval()
	case HookDecided:
		d.hookDecided()
	case ToolCompleted, ToolFailed, ToolCancelled, ToolTimeout:
		c := d.pending(ev.Data.CallID)
		if c == nil {
			return
		}
		delete(st.Pending, ev.Data.CallID)
		if c.Name == DelegateTool {
			d.delegated()
		}
		d.runWaiting()
		d.maybeNextStep()
	case Cancel, Stopped:
		d.endTurnNow(ev.Data.Reason)
	}
}

// current reports whether the event answers the LLM call in flight.
func (d *decider) current() bool {
	return d.st.Request != "" && d.ev.CausationID == d.st.Request
}

func (d *decider) pending(callID string) *call {
	if callID == "" || d.st.Pending == nil {
		return nil
	}
	return d.st.Pending[callID]
}

// startTurn answers user message id: the first LLM call of a turn, or,
// once the budget is spent, conversation.budget.exceeded again.
func (d *decider) startTurn(id string) {
	st := d.st
	if d.budgetReached() {
		d.budgetRecord("budget."+id, id)
		return
	}
	st.Turn, st.Step, st.Calls, st.Ending, st.Queued = id, 1, 0, "", ""
	st.Pending = nil
	d.callLLM(1, 0)
}

// callLLM decides attempt of the turn's current step; its first attempt
// waits for a compaction when the context nears the model's window.
func (d *decider) callLLM(attempt int, delayMS int64) {
	if attempt == 1 && d.compactFirst() {
		return
	}
	d.llmCall(attempt, delayMS)
}

// llmCall decides attempt of the turn's current step.
func (d *decider) llmCall(attempt int, delayMS int64) {
	st := d.st
	st.Attempt = attempt
	// A user message that came during the turn is in the context of this
	// call; it needs no turn of its own any more.
	st.Queued = ""
	st.Request = fmt.Sprintf("llm.%s.%d.%d", st.Turn, st.Step, attempt)
	d.out = append(d.out, LLMCall{Conversation: d.key, Request: st.Request, Step: st.Step, Attempt: attempt, DelayMS: delayMS, LLM: st.LLM, Tools: st.Tools})
}

// answered handles the model's answer: its tool calls run (in the order
// the model made them, at most ParallelTools at once); an answer without
// calls ends the turn.
func (d *decider) answered() {
	st := d.st
	if len(st.Pending) == 0 {
		d.endTurn() // an answer without tool calls
		return
	}
	lim := st.Limits.WithDefaults()
	for _, id := range d.order(callRequested) {
		c := st.Pending[id]
		switch {
		case !d.allowed(c.Name):
			d.close(id, c, ToolFailed, ReasonNotDelegated, d.notDelegated(c.Name))
		case c.ArgsErr != "":
			d.close(id, c, ToolFailed, reasonInvalidArgs, fmt.Sprintf("the arguments of %s are not valid JSON: %s", c.Name, c.ArgsErr))
		case c.Index > lim.MaxToolCalls:
			st.Ending = ReasonMaxToolCalls
			d.close(id, c, ToolFailed, ReasonMaxToolCalls, fmt.Sprintf("not run: the turn reached its limit of %d tool calls (limits.max_tool_calls)", lim.MaxToolCalls))
		}
	}
	d.runWaiting()
	d.maybeNextStep()
}

// order returns the ids of the pending calls in state, in the order the
// model made them.
func (d *decider) order(state string) []string {
	var ids []string
	for id, c := range d.st.Pending {
		if c.State == state {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return d.st.Pending[a].Index - d.st.Pending[b].Index })
	return ids
}

// runWaiting starts requested calls while fewer than ParallelTools run.
func (d *decider) runWaiting() {
	st := d.st
	if st.Turn == "" || st.Request != "" {
		return
	}
	running := len(d.order(callRunning))
	for _, id := range d.order(callRequested) {
		if running >= st.Limits.WithDefaults().ParallelTools {
			return
		}
		c := st.Pending[id]
		c.State = callRunning
		c.Approved = c.Approved || st.Approved[c.Name]
		// The state keeps the args while the call runs: a person's approval
		// runs it again with them.
		d.out = append(d.out, RunTool{Conversation: d.key, CallID: id, Name: c.Name, Args: c.Args, Approved: c.Approved, Mode: st.Mode, Hooked: c.Hooked, Budget: d.childBudget(c.Name)})
		running++
	}
}

// maybeNextStep asks the model again once every call of the step is
// answered, or ends the turn at a limit. (Every call of a step is
// answered before the next LLM call, so the pending calls are always the
// current step's.)
func (d *decider) maybeNextStep() {
	st := d.st
	if st.Turn == "" || st.Request != "" || len(st.Pending) > 0 {
		return
	}
	lim := st.Limits.WithDefaults()
	switch {
	case st.Ending == ReasonBudget:
		d.endTurn() // conversation.budget.exceeded is recorded
	case st.Ending != "":
		d.failTurn(st.Ending, fmt.Sprintf("the turn made more than %d tool calls (limits.max_tool_calls); the calls beyond it were not run", lim.MaxToolCalls))
	case st.Step >= lim.MaxSteps:
		d.failTurn(ReasonMaxSteps, fmt.Sprintf("the turn reached its limit of %d LLM calls (limits.max_steps) and the model still calls tools", lim.MaxSteps))
	default:
		st.Step++
		d.callLLM(1, 0)
	}
}

// llmFailed retries a failed attempt that may succeed again, and ends the
// turn otherwise.
func (d *decider) llmFailed() {
	st, data := d.st, d.ev.Data
	typ := ""
	if data.Error != nil {
		typ = data.Error.Type
	}
	if typ == ReasonCancelled {
		return // the cancel that caused it has ended the turn
	}
	retry := data.Retryable || typ == ReasonInterrupted
	if retry && st.Attempt < MaxAttempts {
		d.callLLM(st.Attempt+1, data.RetryInMS)
		return
	}
	d.endTurn()
}

// approval applies a person's decision on a call waiting for one.
func (d *decider) approval() {
	st, data := d.st, d.ev.Data
	c := d.pending(data.CallID)
	if c == nil || c.State != callApproval {
		return // decided already (an approval after the timeout, or twice)
	}
	if d.ev.ID != approvalTimeoutID(data.CallID) {
		d.withdrawTimeout(data.CallID)
	}
	if data.Decision != DecisionApprove {
		by := data.By
		if by == "" {
			by = "a person"
		}
		msg := fmt.Sprintf("%s denied the call of %s", by, c.Name)
		if data.Reason == "timeout" {
			msg = fmt.Sprintf("no one approved the call of %s in time; denied", c.Name)
		} else if data.Reason != "" {
			msg += ": " + data.Reason
		}
		d.close(data.CallID, c, ToolFailed, ReasonDenied, msg)
		return
	}
	if data.Remember == "conversation" {
		if st.Approved == nil {
			st.Approved = map[string]bool{}
		}
		st.Approved[c.Name] = true
	}
	c.State = callRunning
	c.Approved = true
	d.out = append(d.out, RunTool{Conversation: d.key, CallID: data.CallID, Name: c.Name, Args: c.Args, Approved: true, Mode: st.Mode, Hooked: c.Hooked, Budget: d.childBudget(c.Name)})
}

// mode is the event's mode as the loop keeps it: "" for auto (so that
// the RunTool of a conversation that never left auto is what it always
// was, and its log replays as written), and a mode the loop does not
// know read as plan, the strictest — the API refuses one before it is
// logged, so only a hand-made event has it.
func (d *decider) mode() string {
	switch m := d.ev.Data.Mode; m {
	case "", ModeAuto:
		return ""
	case ModeAsk:
		return ModeAsk
	default:
		return ModePlan
	}
}

// approvalTimeoutID is the id of the deny that call id's approval timeout
// delivers.
func approvalTimeoutID(id string) string { return "approval." + id + ".timeout" }

// withdrawTimeout cancels the approval timeout of call id, which a person
// (or a cancel) settled first: left standing, it would be delivered
// later — after a restart too — and logged as a deny after the call was
// approved and done.
// Conversations of loop version 1 never withdrew it: they keep that
// decision, so their logs still replay exactly.
func (d *decider) withdrawTimeout(id string) {
	if d.st.Version < 2 {
		return
	}
	d.out = append(d.out, agents.ScheduleCancel{SignalID: approvalTimeoutID(id)})
}

// close records the outcome of a call the loop settles itself.
func (d *decider) close(id string, c *call, typ, reason, msg string) {
	c.State = callClosing
	c.Args = nil
	suffix := "failed"
	data := map[string]any{"call_id": id}
	if typ == ToolCancelled {
		suffix = "cancelled"
		data["reason"] = msg
	} else {
		data["error"] = bus.Errorf(reason, "%s", msg)
	}
	d.record(typ, "tool."+id+"."+suffix, id, data)
}

// endTurn ends the turn; a user message that came meanwhile starts the
// next.
func (d *decider) endTurn() {
	queued := d.st.Queued
	d.clearTurn()
	if queued != "" {
		d.startTurn(queued)
		return
	}
	// A compaction asked during the turn is done now, between turns.
	if cs := &d.st.Compact; cs.Asked != "" && cs.Request == "" {
		asked := cs.Asked
		cs.Asked = ""
		d.compact(CompactAsk, "compact."+asked)
	}
}

// failTurn ends the turn with a recorded reason.
func (d *decider) failTurn(reason, msg string) {
	turn := d.st.Turn
	d.record(LLMFailed, "turn."+turn+"."+reason, turn, map[string]any{"error": bus.Errorf(reason, "%s", msg)})
	d.endTurn()
}

// endTurnNow cancels the turn: the work in flight is cancelled by its
// executors, the calls not started are recorded cancelled here.
func (d *decider) endTurnNow(reason string) {
	st := d.st
	if st.Turn == "" {
		return
	}
	if reason == "" {
		reason = "the conversation was cancelled"
	}
	if st.Request != "" || len(d.order(callRunning)) > 0 {
		d.out = append(d.out, CancelTurn{Conversation: d.key, Reason: reason})
	}
	for _, state := range []string{callRequested, callApproval} {
		for _, id := range d.order(state) {
			if state == callApproval {
				d.withdrawTimeout(id)
			}
			d.close(id, st.Pending[id], ToolCancelled, ReasonCancelled, reason)
		}
	}
	d.clearTurn()
	st.Queued = ""
}

func (d *decider) clearTurn() {
	st := d.st
	st.Turn, st.Step, st.Attempt, st.Request, st.Calls, st.Ending, st.Queued = "", 0, 0, "", 0, "", ""
	st.Pending = nil
	st.Compact.Resume = false
}

// record appends a conversation event the loop decided.
func (d *decider) record(typ, id, causation string, data any) {
	d.out = append(d.out, Record{Event: d.signal(typ, id, causation, data)})
}

// signal builds a conversation event of this conversation. It carries the
// time of the event being handled: the loop has no clock.
func (d *decider) signal(typ, id, causation string, data any) bus.Signal {
	s, _ := NewEvent(d.key, typ, id, causation, d.ev.Time, data) // maps of strings and errors always encode
	return s
}

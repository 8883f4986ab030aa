package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/eventlog"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// delegations runs the delegate tool's calls (assistant.Config.Delegate):
// each starts a child conversation, the runtime's child of the calling
// one, and waits for its final answer. working counts the children each
// conversation has at work, for delegation.max_fanout.
type delegations struct {
	n       *Node
	mu      sync.Mutex
	working map[string]int
}

// run is assistant.Config.Delegate.
func (g *delegations) run(ctx context.Context, c assistant.DelegateCall) assistant.DelegateResult {
	project, parentConv, _ := strings.Cut(c.Conversation, "/")
	child := childConversation(parentConv, c.CallID)
	key := project + "/" + child
	// The slot is taken before the child starts, so that two calls at
	// once cannot both pass the bound; one found again after a restart
	// always counts.
	if !g.enter(c.Conversation, c.Recovered) {
		return g.fanoutRefused(project)
	}
	defer g.leave(c.Conversation)
	events, err := g.n.conv.Events(ctx, key)
	if err != nil {
		return failed(child, conversation.ReasonDelegation, "read child conversation %s: %v", key, err)
	}
	if len(events) == 0 {
		if c.Recovered {
			// Never started: the call may have waited for a person, whose
			// approval a restart does not skip.
			return failed("", conversation.ReasonInterrupted, "delegate call %s did not finish: the node stopped before its child conversation started; it is not started again", c.CallID)
		}
		if res, ok := g.start(ctx, c, project, child); !ok {
			return res
		}
	}
	res := g.await(ctx, key, child, c)
	if assistant.TurnCancelled(ctx) {
		// The turn that delegated was cancelled: so is the child's. An
		// answered child stays open, as any conversation (conv send goes on
		// with it), and stops with its parent, its runtime parent.
		if _, err := g.n.conv.Cancel(context.WithoutCancel(ctx), convapi.CancelRequest{Conv: key, Reason: "the turn that delegated to it was cancelled"}); err != nil {
			g.n.log.Warn("cancel a delegated conversation", "conversation", key, "err", err)
		}
	}
	return res
}

// start checks the call against its bounds and starts the child
// conversation: refused past delegation.max_depth or max_fanout, with a
// tool outside its parent's, or a mode looser than its parent's.
func (g *delegations) start(ctx context.Context, c assistant.DelegateCall, project, child string) (assistant.DelegateResult, bool) {
	var args assistant.DelegateArgs
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return failed("", tools.ReasonInvalidArgs, "delegate's arguments: %v: give {\"task\": \"…\", \"tools\": [\"read_file\"], \"max_steps\": 10}", err), false
	}
	switch {
	case strings.TrimSpace(args.Task) == "":
		return failed("", tools.ReasonInvalidArgs, "delegate needs a task: give {\"task\": \"…\"}"), false
	case args.MaxSteps < 0 || args.MaxSteps > conversation.MaxMaxSteps:
		return failed("", tools.ReasonInvalidArgs, "delegate's max_steps %d: give 1 to %d", args.MaxSteps, conversation.MaxMaxSteps), false
	case conversation.CheckMode(args.Mode) != nil:
		return failed("", tools.ReasonInvalidArgs, "delegate's mode %q: give plan, ask or auto, no looser than this conversation's", args.Mode), false
	}
	parent, err := g.n.conv.Events(ctx, c.Conversation)
	if err != nil || len(parent) == 0 || parent[0].Type != conversation.Started {
		return failed("", conversation.ReasonDelegation, "read conversation %s, which delegates: %v", c.Conversation, err), false
	}
	started := parent[0].Data
	depth := 1
	if started.Delegated != nil {
		depth = started.Delegated.Depth + 1
	}
	settings, _, err := g.n.projects.Settings(project)
	if err != nil {
		return failed("", conversation.ReasonDelegation, "%s", bus.AsError(err).Message), false
	}
	if err := settings.Delegation.Check(); err != nil {
		return failed("", conversation.ReasonDelegation, "%s in .jido/config.yaml", bus.AsError(err).Message), false
	}
	bounds := settings.Delegation.WithDefaults()
	if depth > bounds.MaxDepth {
		return failed("", conversation.ReasonDelegation, "not delegated: a child of %s would be %d deep, past delegation.max_depth %d (.jido/config.yaml); do the task here, or raise the bound", c.Conversation, depth, bounds.MaxDepth), false
	}
	mine, err := g.toolsOf(project, started.Tools)
	if err != nil {
		return failed("", conversation.ReasonDelegation, "%s", bus.AsError(err).Message), false
	}
	handed := mine
	if args.Tools != nil {
		handed = *args.Tools
		for _, t := range handed {
			if !slices.Contains(mine, t) {
				return failed("", conversation.ReasonDelegation, "not delegated: %s is not among this conversation's tools (%s); a child gets a subset of them", t, strings.Join(mine, ", ")), false
			}
		}
	}
	mode := c.Mode
	if args.Mode != "" {
		if conversation.ModeRank(args.Mode) > conversation.ModeRank(c.Mode) {
			return failed("", conversation.ReasonDelegation, "not delegated: mode %s is looser than this conversation's %s; give %s or stricter", args.Mode, conversation.EffectiveMode(c.Mode), conversation.EffectiveMode(c.Mode)), false
		}
		mode = args.Mode
	}
	if conversation.EffectiveMode(mode) == conversation.ModeAuto {
		mode = ""
	}
	var limits *conversation.Limits
	if args.MaxSteps > 0 {
		limits = &conversation.Limits{MaxSteps: args.MaxSteps}
	}
	_, err = g.n.conv.Start(ctx, convapi.StartRequest{
		Project: project, Conversation: child, Limits: limits, Budget: c.Budget, Mode: mode,
		By: "delegate:" + c.Conversation, Tools: &handed,
		Delegated: &conversation.Delegation{Conversation: c.Conversation, CallID: c.CallID, Depth: depth},
	})
	if err != nil {
		return failed("", conversation.ReasonDelegation, "start the child conversation: %s", bus.AsError(err).Message), false
	}
	if _, err := g.n.conv.Send(ctx, convapi.SendRequest{Conv: project + "/" + child, Text: args.Task}); err != nil {
		return failed(child, conversation.ReasonDelegation, "give the child conversation its task: %s", bus.AsError(err).Message), false
	}
	return assistant.DelegateResult{}, true
}

// toolsOf is what a conversation may call: its project's tools as the
// policy offers them, or the subset it was handed.
func (g *delegations) toolsOf(project string, handed *[]string) ([]string, error) {
	if handed != nil {
		return *handed, nil
	}
	specs, err := g.n.projects.Tools(project)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return names, nil
}

func (g *delegations) fanoutRefused(project string) assistant.DelegateResult {
	bounds := assistant.DelegationSettings{}
	if s, _, err := g.n.projects.Settings(project); err == nil {
		bounds = s.Delegation
	}
	return failed("", conversation.ReasonDelegation, "not delegated: this conversation has %d children at work, delegation.max_fanout (.jido/config.yaml); wait for their answers first", bounds.WithDefaults().MaxFanout)
}

// enter counts a child at work for parent; false past max_fanout (a
// child found again after a restart always counts).
func (g *delegations) enter(parent string, recovered bool) bool {
	project, _, _ := strings.Cut(parent, "/")
	bounds := assistant.DelegationSettings{}
	if s, _, err := g.n.projects.Settings(project); err == nil {
		bounds = s.Delegation
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !recovered && g.working[parent] >= bounds.WithDefaults().MaxFanout {
		return false
	}
	g.working[parent]++
	return true
}

func (g *delegations) leave(parent string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.working[parent]--; g.working[parent] <= 0 {
		delete(g.working, parent)
	}
}

// await follows the child conversation key from its start to the end of
// its task's turn: its final answer, or why it has none.
func (g *delegations) await(ctx context.Context, key, child string, c assistant.DelegateCall) assistant.DelegateResult {
	w := &childTurn{res: assistant.DelegateResult{Child: child}}
	follow, err := g.n.conv.Follow(ctx, key, 0)
	if err != nil {
		return failed(child, conversation.ReasonDelegation, "follow child conversation %s: %v", key, err)
	}
	for ev, err := range follow {
		if err != nil {
			return w.fail(conversation.ReasonDelegation, "following child conversation %s: %v", key, err)
		}
		if ev.Seq == 0 || ev.Invalid != "" {
			continue // a delta: not logged
		}
		if w.see(ev) {
			return w.res
		}
	}
	if ctx.Err() != nil {
		return w.fail(tools.ReasonCancelled, "the delegate call %s ended before its child %s answered", c.CallID, key)
	}
	return w.fail(conversation.ReasonDelegation, "following child conversation %s ended before its answer", key)
}

// childTurn reads a child conversation's events: what it spent, and the
// end of its task's turn.
type childTurn struct {
	res  assistant.DelegateResult
	task bool
	// answer is the LLM call whose answer is final: the turn ends at its
	// llm.completed, which counts its usage.
	answer string
}

// see takes one event and reports whether the turn has ended.
func (w *childTurn) see(ev *views.Event) bool {
	d := &ev.Data
	switch ev.Type {
	case conversation.LLMCompleted, conversation.ToolCompleted, conversation.ToolFailed:
		// A child's own children's spending is in its delegate calls'
		// outcomes.
		if d.Usage != nil {
			w.res.Usage.InputTokens += d.Usage.InputTokens
			w.res.Usage.OutputTokens += d.Usage.OutputTokens
		}
		w.res.CostUSD = conversation.AddUSD(w.res.CostUSD, d.CostUSD)
		if ev.Type == conversation.LLMCompleted && w.answer != "" && ev.CausationID == w.answer {
			return true
		}
	case conversation.UserMessage:
		w.task = true
	case conversation.AssistantMessage:
		if w.task && d.ToolCalls == 0 {
			w.res.Answer, w.answer = d.Text, ev.CausationID
		}
	case conversation.LLMFailed:
		if w.task && !d.Retryable && (d.Error == nil || d.Error.Type != conversation.ReasonInterrupted || d.Attempt >= conversation.MaxAttempts) {
			typ, msg := conversation.ReasonDelegation, "the child conversation could not answer"
			if d.Error != nil {
				typ, msg = d.Error.Type, d.Error.Message
			}
			w.fail(typ, "the child conversation %s ended without an answer: %s", w.res.Child, msg)
			return true
		}
	case conversation.BudgetExceeded:
		w.fail(conversation.ReasonBudget, "the child conversation %s spent its budget (what was left of this conversation's) before it answered: %s", w.res.Child, d.Reason)
		return true
	case conversation.Cancel, conversation.Stopped:
		if w.task {
			w.fail(conversation.ReasonDelegation, "the child conversation %s was cancelled or stopped before it answered", w.res.Child)
			return true
		}
	}
	return false
}

func (w *childTurn) fail(typ, format string, args ...any) assistant.DelegateResult {
	w.res.Err = tools.Errorf(typ, format, args...)
	return w.res
}

func failed(child, typ, format string, args ...any) assistant.DelegateResult {
	return assistant.DelegateResult{Child: child, Err: tools.Errorf(typ, format, args...)}
}

// notID is what a conversation id may not hold.
var notID = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// childConversation is the id of the child a delegate call starts,
// derived from the call so that a restart finds it again:
// <parent>-<call id>, or a digest of them past an id's length.
func childConversation(parent, callID string) string {
	id := parent + "-" + strings.Trim(notID.ReplaceAllString(callID, "-"), "-")
	if len(id) > 100 || conversation.ValidateID(id) != nil {
		sum := sha256.Sum256([]byte(parent + "\x00" + callID))
		id = "d-" + hex.EncodeToString(sum[:12])
	}
	return id
}

// resumeDelegations takes up, after a restart, the delegate calls that
// were running: the resume left them open, their children resume as
// every conversation does, and the assistant waits for their answers
// again.
func (n *Node) resumeDelegations() {
	for _, listed := range n.rt.ListSome(runtime.ListOptions{Type: conversation.AgentType}) {
		info, err := n.rt.State(listed.ID)
		if err != nil {
			continue
		}
		st, err := conversation.ReadState(info.State)
		if err != nil || !slices.Contains(slices.Collect(maps.Values(st.PendingTools)), conversation.DelegateTool) {
			continue
		}
		status := views.NewStatus()
		for e, err := range n.evlog.ReadStream(conversation.Stream(listed.ID), eventlog.ReadOptions{Types: conversation.TypePattern}) {
			if err != nil {
				break
			}
			if ev := views.Decode(e); ev != nil {
				status.Fold(ev)
			}
		}
		for _, p := range status.PendingTools {
			if p.Name != conversation.DelegateTool || p.State != views.ToolRunning {
				continue
			}
			key := listed.ID
			n.assistant.ResumeDelegate(key, p.CallID, func(sig bus.Signal) error {
				ctx, cancel := context.WithTimeout(context.Background(), delegateDeliverTimeout)
				defer cancel()
				_, err := n.rt.Call(ctx, key, sig)
				return err
			})
			n.log.Info("delegate call resumed", "conversation", key, "call", p.CallID)
		}
	}
}

// delegateDeliverTimeout bounds the commit of a resumed delegate call's
// outcome.
const delegateDeliverTimeout = 30 * time.Second

package agents

import (
	"errors"
	"fmt"
	"slices"

	"github.com/jido-bus/jido-bus/bus"
)

// Cmd runs instructions on agent, in order, with the agent type's strategy,
// and returns the new agent and the directives the instructions produced,
// in order. It is pure: it does no I/O, reads no clock and draws no random
// number, so the same agent and instructions always give the same agent
// and byte-identical directives (see DirectiveCodec) — which is how the
// runtime replays an agent's log.
//
// Cmd never fails and never panics. An instruction that cannot run (an
// unknown action, params that fail the action's schema, an action that
// returns an error or panics, a result that cannot be applied, an outcome
// the strategy refuses) leaves the state as it was before that instruction
// and adds one Error directive in place of its directives; Cmd then goes
// on with the next instruction. Bad params, and errors an action wraps
// with Refuse, give a Refused Error directive: the runtime commits no
// decision that holds one (see Refuse).
//
// Signals emitted by the directives get ids derived from their
// instruction's origin and their index in the returned slice (see Emit).
func Cmd(agent Agent, instructions ...Instruction) (Agent, []Directive) {
	if agent.def == nil {
		return agent, []Directive{newError(ReasonNoDefinition, ContextAgent, "", "agent %q was not made by a Definition (use Definition.New or Restore)", agent.ID)}
	}
	r := newRun(agent)
	st := agent.State
	for _, in := range instructions {
		st = r.instruction(st, in, 0)
	}
	dirs := r.finalize()
	return Agent{ID: agent.ID, State: st, def: agent.def, src: r.src}, dirs
}

// Step is the whole pure handling of one signal, the function the runtime
// calls for each signal it has accepted and again when it replays the log:
// the HandleSignal hooks of the skills whose signal patterns match, routing
// to the first matching route (an unmatched signal gives an Error directive
// with context "routing"), Cmd on the routed instruction, then the
// TransformResult hooks. Like Cmd it never panics and is deterministic.
func Step(agent Agent, sig bus.Signal) (Agent, []Directive) {
	if agent.def == nil {
		return Cmd(agent)
	}
	r := newRun(agent)
	next := r.step(agent, sig)
	dirs := r.finalize()
	if next.src == nil {
		next.src = r.src // parsed by finalize, kept for the next step
	}
	return next, dirs
}

// ReplayOptions tell Replay what the caller knows of the step it replays.
type ReplayOptions struct {
	// NoErrors says the directives the step decided when it first ran
	// hold no Error directive. Params that fail validation always give
	// one, which only a TransformResult hook could have taken out, so on
	// an agent type without such hooks Replay then skips validating the
	// params again: the step's action ran on them before, and runs on
	// them again alike.
	NoErrors bool
}

// Replay returns the agent Step(agent, sig) returns, without building the
// step's directives — for a caller that holds them already, such as the
// runtime replaying its log, which needs only the state the log's signals
// fold into. With opts.NoErrors on an agent type without TransformResult
// hooks it does not validate params either (see ReplayOptions). The state
// is Step's, byte for byte, as long as opts tells the truth.
func Replay(agent Agent, sig bus.Signal, opts ReplayOptions) Agent {
	if agent.def == nil {
		return agent
	}
	r := newRun(agent)
	r.paramsChecked = opts.NoErrors && !agent.def.transformsResults()
	return r.step(agent, sig)
}

// step is Step up to the completion of its directives, which it leaves in
// r.out.
func (r *run) step(agent Agent, sig bus.Signal) Agent {
	d := agent.def
	origin := OriginOf(sig)
	hooked := false // a hook gave a new signal, whose origin routing takes
	for _, inst := range d.matchingSkills(sig.Type(), func(s Skill) bool { return s.HandleSignal != nil }) {
		next, err := callHook(func() (bus.Signal, error) { return inst.skill.HandleSignal(sig.Clone(), inst.config) })
		if err != nil {
			r.add(errorDirective(err, ContextHook, "", ReasonHookFailed), origin)
			return agent
		}
		sig, hooked = next, true
	}
	var in Instruction
	var ok bool
	if hooked {
		in, ok = d.Route(sig)
	} else {
		in, ok = d.routeFrom(sig, origin)
	}
	if !ok {
		r.add(newError(ReasonNoRoute, ContextRouting, "", "agent %s (%s): no route matches signal type %q", agent.ID, d.name, sig.Type()), origin)
		return agent
	}
	st := r.instruction(agent.State, in, 0)
	for _, inst := range d.matchingSkills(sig.Type(), func(s Skill) bool { return s.TransformResult != nil }) {
		produced := slices.Clone(r.out)
		for i, dir := range produced {
			// Hooks see an Emit an action gave by pointer as the Emit.
			if e, ok := dir.(*Emit); ok && e != nil {
				produced[i] = *e
			}
		}
		next, err := callHook(func() ([]Directive, error) { return inst.skill.TransformResult(sig.Clone(), produced, inst.config) })
		if err != nil {
			r.reset()
			r.add(errorDirective(err, ContextHook, "", ReasonHookFailed), origin)
			return agent
		}
		r.reset()
		for _, dir := range next {
			r.add(dir, origin)
		}
	}
	return Agent{ID: agent.ID, State: st, def: d, src: r.src}
}

// callHook runs a skill hook, turning a panic into an error.
func callHook[T any](fn func() (T, error)) (out T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = bus.Errorf(ReasonPanic, "skill hook panicked: %v", p)
		}
	}()
	return fn()
}

// run accumulates the directives of one Cmd or Step call, each with the
// origin of the instruction that produced it.
type run struct {
	def     *Definition
	agentID string
	// out is the directives so far; finalize completes them in place and
	// returns it. While they all share one origin (one instruction, the
	// usual case) it is origin; once they differ, origins holds each
	// one's, so the usual case allocates no second slice.
	out     []Directive
	origin  Origin
	origins []Origin
	// src is the agent's parsed source: the agent's own when it is for
	// agentID, else made on first use.
	src *agentSource
	// paramsChecked skips validating params: they passed when the step
	// first ran (Replay).
	paramsChecked bool
}

func newRun(a Agent) run {
	r := run{def: a.def, agentID: a.ID}
	if a.src != nil && a.src.id == a.ID {
		r.src = a.src
	}
	return r
}

func (r *run) add(d Directive, o Origin) {
	switch {
	case r.origins != nil:
		r.origins = append(r.origins, o)
	case len(r.out) == 0:
		r.origin = o
	case o != r.origin:
		r.origins = make([]Origin, len(r.out), cap(r.out)+1)
		for i := range r.origins {
			r.origins[i] = r.origin
		}
		r.origins = append(r.origins, o)
	}
	r.out = append(r.out, d)
}

// originOf returns the origin of the directive at index i of out.
func (r *run) originOf(i int) Origin {
	if r.origins != nil {
		return r.origins[i]
	}
	return r.origin
}

// reset forgets the directives so far.
func (r *run) reset() { r.out, r.origins = r.out[:0], nil }

// instruction runs one instruction (and the Then chain it returns) on st
// and returns the state to keep.
func (r *run) instruction(st State, in Instruction, depth int) State {
	ba, ok := r.def.actions[in.Action]
	if !ok {
		r.add(newError(ReasonUnknownAction, ContextInstruction, in.Action, "agent type %s has no action %q", r.def.name, in.Action), in.Origin)
		return st
	}
	if ba.params != nil && !r.paramsChecked {
		if err := validateParams(ba, in.Params); err != nil {
			r.add(errorDirective(Refuse(err), ContextParams, in.Action, ReasonInvalidParams), in.Origin)
			return st
		}
	}
	res, err := r.call(ba, st, in)
	if err != nil {
		ctx, reason := ContextAction, ReasonActionFailed
		var pe *paramsError
		var panicked *panicError
		switch {
		case errors.As(err, &pe):
			ctx, reason = ContextParams, ReasonInvalidParams
			err = Refuse(err)
		case errors.As(err, &panicked):
			ctx, reason = ContextPanic, ReasonPanic
		}
		r.add(errorDirective(err, ctx, in.Action, reason), in.Origin)
		return st
	}
	next, err := r.apply(ba, st, res)
	if err != nil {
		r.add(errorDirective(err, ContextState, in.Action, ReasonInvalidState), in.Origin)
		return st
	}
	if err := admit(r.def.strategy, st, next); err != nil {
		r.add(errorDirective(err, ContextStrategy, in.Action, ReasonTransitionDenied), in.Origin)
		return st
	}
	for _, d := range res.Directives {
		r.add(d, in.Origin)
	}
	for _, then := range res.Then {
		if then.Origin == (Origin{}) {
			then.Origin = in.Origin
		}
		if depth+1 > MaxThenDepth {
			r.add(newError(ReasonTooDeep, ContextInstruction, then.Action, "Then chain deeper than %d instructions", MaxThenDepth), in.Origin)
			break
		}
		next = r.instruction(next, then, depth+1)
	}
	return next
}

func validateParams(ba *boundAction, params []byte) error {
	if ba.check != nil && ba.check.valid(params) {
		return nil
	}
	if len(params) == 0 {
		return ba.params.Validate(map[string]any{})
	}
	if v, ok := flatObject(params); ok {
		return ba.params.Validate(v)
	}
	return ba.params.ValidateJSON(params)
}

type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("action panicked: %v", e.value) }

// call runs the action with a recover, so a panic becomes an error.
func (r *run) call(ba *boundAction, st State, in Instruction) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, &panicError{p}
		}
	}()
	env := Env{AgentID: r.agentID, Action: ba.name, State: st, AgentState: st, Origin: in.Origin}
	if ba.skill != nil {
		env.State = st.Object(ba.skill.key)
		env.Config = ba.skill.config
		env.skill = ba.skill
	}
	return ba.action.Run(env, in.Params)
}

// apply returns st with res's state changes applied in the action's scope.
func (r *run) apply(ba *boundAction, st State, res Result) (State, error) {
	if res.State == nil && len(res.Ops) == 0 && res.Transition == "" {
		return st, nil
	}
	var scope []string
	if ba.skill != nil {
		scope = []string{ba.skill.key}
	}
	cur := map[string]any(st)
	var err error
	if res.State != nil {
		if cur, err = (Replace{State: res.State}).apply(cur, scope); err != nil {
			return nil, err
		}
	}
	for i, op := range res.Ops {
		if op == nil {
			return nil, fmt.Errorf("state operation %d is nil", i)
		}
		if cur, err = op.apply(cur, scope); err != nil {
			return nil, fmt.Errorf("state operation %d: %w", i, err)
		}
	}
	if res.Transition != "" {
		k, ok := r.def.strategy.(interface{ StateKey() string })
		if !ok {
			return nil, bus.Errorf(ReasonTransitionDenied, "the action asked for a transition to %q, but the agent's strategy (%s) has no machine states", res.Transition, r.def.strategy.Name())
		}
		if cur, err = setAt(cur, []string{k.StateKey()}, res.Transition); err != nil {
			return nil, err
		}
	}
	return State(cur), nil
}

func admit(s Strategy, before, after State) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = bus.Errorf(ReasonPanic, "strategy %s panicked: %v", s.Name(), p)
		}
	}()
	return s.Admit(before, after)
}

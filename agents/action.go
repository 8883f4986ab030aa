package agents

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// Action is one thing an agent can do: a pure function from the state it
// may see and its params to a Result. Run must not do I/O, read the clock,
// draw random numbers or keep what it is given; everything it needs is in
// Env, and everything it wants done is in the Result. A Run that panics
// does not take the agent down: Cmd recovers it into an Error directive.
type Action struct {
	// Name is unique within the agent (within the skill for a skill's
	// action, which is then addressed as <prefix>.<Name>).
	Name        string
	Description string
	// Params is the JSON Schema (draft 2020-12) of the params, compiled
	// once when the agent type is defined. Cmd validates params against it
	// before Run and turns a failure into an Error directive naming the
	// failing field. Empty means params are not validated, which saves a
	// decode per instruction on hot paths. Defaults in the schema document
	// the params; Run applies them.
	Params string
	// Run computes the outcome. params is the instruction's JSON as sent
	// (nil when there were none); use Typed to receive a Go value instead.
	Run func(env Env, params json.RawMessage) (Result, error)
}

// Env is what an action sees when it runs.
type Env struct {
	// AgentID is the id of the running agent.
	AgentID string
	// Action is the qualified name the action runs under.
	Action string
	// State is the state in the action's scope: the whole state for an
	// agent's own action, the skill's slice (under its state key) for a
	// skill's action. Do not modify it.
	State State
	// AgentState is the whole state, for reading across scopes. Do not
	// modify it.
	AgentState State
	// Config is the skill's validated configuration with defaults applied;
	// nil for an agent's own action. Do not modify it.
	Config map[string]any
	// Origin is the signal the instruction answers.
	Origin Origin

	skill *skillInstance // the skill the action belongs to; nil for the agent's own
}

// ChildTag returns the tag under which this agent knows the child its
// skill's ChildSpecs asked for as tag: "<alias>-<tag>" when the skill is
// attached under an alias, tag itself otherwise (and for the agent's own
// actions). A skill's action that stops or addresses its children
// (StopChild) names them through it, so each copy of the skill reaches
// its own.
func (e Env) ChildTag(tag string) string {
	if e.skill == nil {
		return tag
	}
	return e.skill.childTag(tag)
}

// Now returns the time of the signal being handled — the agent's only
// clock. It is the zero time when the instruction has no origin time.
func (e Env) Now() time.Time { return e.Origin.Time }

// Result is an action's outcome. Cmd applies State (when non-nil, it
// replaces the state in the action's scope), then Ops in order, then the
// Transition; if all of that succeeds and the strategy admits it, the
// Directives are kept and the Then instructions run. If anything fails, the
// state stays as it was before the action and only an Error directive is
// produced.
type Result struct {
	State State
	Ops   []StateOp
	// Directives may give an Emit by pointer, which lets an action keep
	// it in storage it allocates for the rest of its result: Cmd returns
	// the Emit it points to, completed, and never modifies it.
	Directives []Directive
	// Transition asks the agent's strategy to move to another machine
	// state (see FSM). Empty means no transition.
	Transition string
	// Then lists instructions to run right after this one, before the
	// next instruction given to Cmd, with this instruction's origin when
	// they have none. Chains nest at most MaxThenDepth deep.
	Then []Instruction
}

// MaxThenDepth bounds how deep Result.Then chains may nest, so an action
// that (by mistake) schedules itself forever ends in an Error directive.
const MaxThenDepth = 16

// paramsError marks a failure to decode params, so Cmd reports it with
// context "params" rather than "action".
type paramsError struct{ err error }

func (e *paramsError) Error() string { return e.err.Error() }
func (e *paramsError) Unwrap() error { return e.err }

// Typed adapts a Run that takes its params as a Go value: the params JSON
// is decoded into P (absent params leave P's zero value). A decoding
// failure becomes an Error directive of type invalid_params, context
// params. P must survive a JSON round trip, since the log stores params as
// JSON.
//
// For a P of plain fields (numbers, strings, booleans, pointers to them)
// and flat params, Typed decodes without encoding/json, with the result
// json.Unmarshal would give, and for a P without pointer fields
// allocates nothing; everything else goes through json.Unmarshal.
func Typed[P any](run func(env Env, params P) (Result, error)) func(Env, json.RawMessage) (Result, error) {
	plan := planParams(reflect.TypeFor[P]())
	return func(env Env, raw json.RawMessage) (Result, error) {
		if len(raw) == 0 {
			var zero P
			return run(env, zero)
		}
		if p, ok := decodeParams[P](plan, raw); ok {
			return run(env, p)
		}
		// A value of its own: the plan may have set fields before it gave
		// up, and json.Unmarshal's target goes to the heap.
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return Result{}, &paramsError{bus.Errorf(ReasonInvalidParams, "params of %s: %v", env.Action, err)}
		}
		return run(env, p)
	}
}

// Fail returns an error for an action to return, with a machine word of
// its choosing ("division_by_zero") as the Error directive's type.
func Fail(reason, format string, args ...any) error {
	return &bus.Error{Type: reason, Message: fmt.Sprintf(format, args...)}
}

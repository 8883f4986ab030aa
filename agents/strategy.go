package agents

import (
	"fmt"
	"maps"
	"slices"

	"github.com/jido-bus/jido-bus/bus"
)

// Strategy decides which outcomes of instructions an agent keeps. Cmd runs
// instructions one after another whatever the strategy; the strategy
// completes a new agent's state and admits or refuses each instruction's
// outcome. Implementations must be pure and safe for concurrent use (one
// Strategy serves every agent of a type).
type Strategy interface {
	// Name identifies the strategy in introspection ("direct", "fsm").
	Name() string
	// Init returns the state a new agent starts in, given the one built
	// from the definition's defaults and the caller's initial state. It
	// must not modify its argument.
	Init(State) State
	// Admit is asked after an instruction's result was applied to a copy
	// of the state; a non-nil error refuses the outcome, and Cmd keeps the
	// state from before the instruction and produces an Error directive of
	// type transition_denied instead of the action's directives.
	Admit(before, after State) error
}

// Direct returns Jido's Direct strategy: every outcome is kept.
func Direct() Strategy { return direct{} }

type direct struct{}

func (direct) Name() string                    { return "direct" }
func (direct) Init(s State) State              { return s }
func (direct) Admit(before, after State) error { return nil }

// FSMSpec describes a finite-state machine over one top-level state member.
type FSMSpec struct {
	// Key is the state member holding the machine state; empty means
	// "status".
	Key string
	// Initial is the machine state of a new agent.
	Initial string
	// Transitions lists, for each machine state, the states it may move
	// to. Every state must appear as a key, terminal ones with no targets.
	Transitions map[string][]string
}

// FSM is a Strategy that keeps an outcome only if it leaves the machine
// state unchanged or moves it along an allowed transition. Actions request
// a move with Result.Transition (or by setting the key). An FSM is
// immutable.
type FSM struct {
	key         string
	initial     string
	transitions map[string][]string
}

// NewFSM checks spec (an initial state that exists, targets that exist) and
// returns the strategy.
func NewFSM(spec FSMSpec) (*FSM, error) {
	key := spec.Key
	if key == "" {
		key = "status"
	}
	if _, ok := spec.Transitions[spec.Initial]; !ok {
		return nil, fmt.Errorf("fsm: initial state %q is not among the states %q", spec.Initial, slices.Sorted(maps.Keys(spec.Transitions)))
	}
	tr := make(map[string][]string, len(spec.Transitions))
	for from, tos := range spec.Transitions {
		for _, to := range tos {
			if _, ok := spec.Transitions[to]; !ok {
				return nil, fmt.Errorf("fsm: transition %s -> %s leads to a state that is not declared", from, to)
			}
		}
		tr[from] = slices.Clone(tos)
	}
	return &FSM{key: key, initial: spec.Initial, transitions: tr}, nil
}

func (f *FSM) Name() string { return "fsm" }

// StateKey returns the state member holding the machine state.
func (f *FSM) StateKey() string { return f.key }

// States returns the machine states, sorted.
func (f *FSM) States() []string { return slices.Sorted(maps.Keys(f.transitions)) }

// Init sets the machine state to the initial one unless the state already
// holds a machine state (an agent started with one, or restored).
func (f *FSM) Init(s State) State {
	if _, ok := s[f.key]; ok {
		return s
	}
	out := maps.Clone(s)
	if out == nil {
		out = State{}
	}
	out[f.key] = f.initial
	return out
}

// Admit refuses a move to a state not reachable in one transition.
func (f *FSM) Admit(before, after State) error {
	from, _ := before[f.key].(string)
	to, ok := after[f.key].(string)
	if !ok {
		return bus.Errorf(ReasonTransitionDenied, "state member %q must hold the machine state as a string", f.key)
	}
	if from == to {
		return nil
	}
	if _, known := f.transitions[to]; !known {
		return bus.Errorf(ReasonTransitionDenied, "%q is not a state of this machine; states are %q", to, f.States())
	}
	if !slices.Contains(f.transitions[from], to) {
		return bus.Errorf(ReasonTransitionDenied, "transition from %q to %q is not allowed; from %q the machine may go to %q", from, to, from, f.transitions[from])
	}
	return nil
}

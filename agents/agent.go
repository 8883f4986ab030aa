package agents

import (
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
)

// Agent is one agent: an id, its state, and the Definition of its type. It
// is a value; Cmd returns a new Agent and leaves the one it was given
// untouched, so a caller may keep the previous version (to answer reads
// while the next one is committed, or to discard an outcome).
//
// An Agent is not safe for concurrent modification, but since nothing in
// this package modifies one, any number of goroutines may read it.
type Agent struct {
	ID    string
	State State
	def   *Definition
	// src is the parsed source of the signals the agent emits, kept from
	// one version of the agent to the next so that Cmd does not build and
	// parse it for every call. It belongs to the id it was made for; ID
	// is a field anyone may change, so Cmd checks that before using it.
	src *agentSource
}

type agentSource struct {
	id     string
	source bus.Source
}

func newAgentSource(id string) *agentSource {
	return &agentSource{id: id, source: bus.ParseSource(SourceOf(id))}
}

// Definition returns the agent's type, or nil for an Agent not made by New
// or Restore.
func (a Agent) Definition() *Definition { return a.def }

// Type returns the name of the agent's type.
func (a Agent) Type() string {
	if a.def == nil {
		return ""
	}
	return a.def.name
}

// MarshalJSON writes {"id":…,"type":…,"state":{…}}.
func (a Agent) MarshalJSON() ([]byte, error) {
	st := a.State
	if st == nil {
		st = State{}
	}
	return json.Marshal(struct {
		ID    string         `json:"id"`
		Type  string         `json:"type"`
		State map[string]any `json:"state"`
	}{a.ID, a.Type(), st})
}

// New returns a new agent of this type with id: the default state with
// initial deep-merged over it, completed by the strategy, and checked
// against the merged schema.
func (d *Definition) New(id string, initial map[string]any) (Agent, error) {
	if err := bus.ValidateAgentID(id); err != nil {
		return Agent{}, err
	}
	init, err := normalizeObject(initial)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: initial state: %w", id, err)
	}
	base := cloneJSON(map[string]any(d.defaultState)).(map[string]any)
	st := d.strategy.Init(State(deepMerge(base, init)))
	if err := d.merged.Validate(map[string]any(st)); err != nil {
		return Agent{}, fmt.Errorf("agent %s: initial state: %w", id, err)
	}
	return Agent{ID: id, State: st, def: d, src: newAgentSource(id)}, nil
}

// Restore returns the agent id of this type with the state encoded in
// stateJSON (as EncodeState wrote it, for example in a snapshot), checked
// against the merged schema.
func (d *Definition) Restore(id string, stateJSON []byte) (Agent, error) {
	if err := bus.ValidateAgentID(id); err != nil {
		return Agent{}, err
	}
	st, err := DecodeState(stateJSON)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: %w", id, err)
	}
	if err := d.merged.Validate(map[string]any(st)); err != nil {
		return Agent{}, fmt.Errorf("agent %s: restored state: %w", id, err)
	}
	return Agent{ID: id, State: st, def: d, src: newAgentSource(id)}, nil
}

// Mount runs each skill's Mount hook on its state slice, in attachment
// order, and returns the agent with the results. The runtime calls it when
// it starts a new agent (not on recovery, whose state is already mounted);
// Cmd never does. A hook's error or panic fails the whole mount.
func (d *Definition) Mount(a Agent) (out Agent, err error) {
	st := a.State
	for _, inst := range d.skills {
		if inst.skill.Mount == nil {
			continue
		}
		slice, err := mountOne(inst, st.Object(inst.key))
		if err != nil {
			return Agent{}, fmt.Errorf("agent %s: mount skill %s: %w", a.ID, inst.label(), err)
		}
		next, err := setAt(st, []string{inst.key}, slice)
		if err != nil {
			return Agent{}, err
		}
		st = next
	}
	if err := d.merged.Validate(map[string]any(st)); err != nil {
		return Agent{}, fmt.Errorf("agent %s: mounted state: %w", a.ID, err)
	}
	return Agent{ID: a.ID, State: st, def: d, src: a.src}, nil
}

func mountOne(inst *skillInstance, slice State) (out map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	given := cloneJSON(map[string]any(slice))
	ns, err := inst.skill.Mount(State(given.(map[string]any)), cloneJSON(inst.config).(map[string]any))
	if err != nil {
		return nil, err
	}
	return normalizeObject(ns)
}

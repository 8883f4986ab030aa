package runtime

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// initialAgent builds the agent an incarnation starts as, from its started
// record. Start, recovery and Replay all build it here — Start from the
// record it is about to commit, not from the request — so the agent a
// start leaves in memory is the one its log rebuilds, byte for byte.
func initialAgent(def *agents.Definition, rec startedRecord) (agents.Agent, error) {
	var initial map[string]any
	if len(rec.InitialState) > 0 {
		if err := json.Unmarshal(rec.InitialState, &initial); err != nil {
			return agents.Agent{}, fmt.Errorf("initial_state of %s agent %s: %w", rec.Type, rec.ID, err)
		}
	}
	a, err := def.New(rec.ID, initial)
	if err != nil {
		return agents.Agent{}, fmt.Errorf("initial_state of %s agent %s: %w", rec.Type, rec.ID, err)
	}
	if a, err = def.Mount(a); err != nil {
		return agents.Agent{}, fmt.Errorf("mount %s agent %s: %w", rec.Type, rec.ID, err)
	}
	return a, nil
}

// decides reports whether cmd record cr decides sig. The record names the
// signal by id, in JSON, where an id that is not valid UTF-8 has each bad
// byte replaced by U+FFFD: such an id is compared as JSON carried it.
func decides(cr *cmdRecord, sig *bus.Signal) bool {
	id := sig.ID()
	if id == cr.Signal {
		return true
	}
	if utf8.ValidString(id) {
		return false
	}
	var carried string
	b, _ := json.Marshal(id) // a string always encodes
	return json.Unmarshal(b, &carried) == nil && carried == cr.Signal
}

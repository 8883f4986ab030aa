// Package builtin holds the agent types jido-bus ships with, used by the
// runtime, the README and the tests of later layers: counter, and
// calculator (assembled from the calculator and stats skills, the example
// of seed 002).
//
// Each constructor returns a new Definition; nothing here is global.
package builtin

import "github.com/jido-bus/jido-bus/agents"

// Register adds every built-in agent type to reg.
func Register(reg *agents.Registry) error {
	for _, def := range []func() (*agents.Definition, error){NewCounter, NewCalculator} {
		d, err := def()
		if err != nil {
			return err
		}
		if err := reg.Register(d); err != nil {
			return err
		}
	}
	return nil
}

package agents

import (
	"fmt"
	"maps"
	"slices"
)

// Registry holds agent types by name, for a runtime that starts agents
// from a type name ({"type":"counter"}). The runtime owns its registry;
// there is no global one. Register at program start; after that, lookups
// are safe for concurrent use (registering is not safe concurrently with
// anything).
type Registry struct {
	defs map[string]*Definition
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{defs: make(map[string]*Definition)} }

// Register adds d under its name; a name registered twice is an error.
func (r *Registry) Register(d *Definition) error {
	if _, dup := r.defs[d.name]; dup {
		return fmt.Errorf("agent type %q is already registered", d.name)
	}
	r.defs[d.name] = d
	return nil
}

// Lookup returns the type registered under name.
func (r *Registry) Lookup(name string) (*Definition, bool) {
	d, ok := r.defs[name]
	return d, ok
}

// Names returns the registered type names, sorted.
func (r *Registry) Names() []string { return slices.Sorted(maps.Keys(r.defs)) }

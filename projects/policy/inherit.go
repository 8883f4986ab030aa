package policy

import (
	"os"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// DefaultCommandEnv names the variables commands may inherit from the
// node's environment unless its operator says otherwise
// (serve --command-env).
func DefaultCommandEnv() []string { return []string{"PATH", "LANG", "LC_ALL", "TERM", "TZ"} }

// Inherit is the node operator's rule for the environment of commands:
// which variables a project's commands.env may choose from, and which
// are the node's own secrets, never passed whatever a policy or the
// operator lists. A project chooses among what the operator allows; it
// never widens it, for its policy comes from its own folder or from
// whoever opened it, and either would otherwise read the node's
// credentials with printenv.
type Inherit struct {
	// Names are the variables commands may inherit; nil means
	// DefaultCommandEnv.
	Names []string
	// Secret reports whether the variable name=value holds one of the
	// node's secrets (secrets.Set.Holds); nil knows none.
	Secret func(name, value string) bool
}

func (in *Inherit) names() []string {
	if in == nil || in.Names == nil {
		return DefaultCommandEnv()
	}
	return in.Names
}

func (in *Inherit) secret(name, value string) bool {
	return in != nil && in.Secret != nil && in.Secret(name, value)
}

// Check refuses a policy whose commands.env lists a variable the operator
// does not let commands inherit, or one of the node's secrets (by its
// name, or by its value in the process's environment: a secret under
// another name is refused too).
func (in *Inherit) Check(p *Policy) error {
	allowed := in.names()
	for _, name := range p.Commands.Env {
		if in.secret(name, os.Getenv(name)) {
			return bus.Errorf(bus.ReasonForbidden, "commands.env of the project's policy lists %s, which holds one of this node's secrets (its credentials, a model provider's key, a webhook secret): no command ever gets it, whatever a policy or the node's operator says; remove %s from commands.env", name, name)
		}
		if !slices.Contains(allowed, name) {
			return bus.Errorf(bus.ReasonForbidden, "commands.env of the project's policy lists %s, which this node does not let commands inherit (it allows %s): the node's operator chooses them (serve --command-env, or commands.env in the serve config); remove %s from commands.env or ask the operator",
				name, strings.Join(allowed, ", "), name)
		}
	}
	return nil
}

// WithInherit returns a copy of p whose commands inherit what in allows.
func (p *Policy) WithInherit(in *Inherit) *Policy {
	c := *p
	c.inherit = in
	return &c
}

// commandEnv names the variables a command of p gets: its commands.env
// (the operator's list when it gives none) less what the operator does
// not allow. A policy stored before the operator narrowed the list keeps
// working, without what it may no longer have.
func (p *Policy) commandEnv() []string {
	allowed := p.inherit.names()
	if p.Commands.Env == nil {
		return allowed
	}
	var out []string
	for _, name := range p.Commands.Env {
		if slices.Contains(allowed, name) {
			out = append(out, name)
		}
	}
	return out
}

package agents

import (
	"fmt"
	"strings"
)

// DefineError reports a bad agent or skill definition. Define plays the
// part of Elixir's compile time: a program that defines its agent types at
// start fails there, with an error that says which agent, which skill and
// which key (a state key, an action, a route pattern, a config field) is
// wrong.
type DefineError struct {
	Agent string
	Skill string // empty for the agent's own definition
	Key   string
	Err   error
}

func (e *DefineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %q", e.Agent)
	if e.Skill != "" {
		fmt.Fprintf(&b, ", skill %q", e.Skill)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ", key %q", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *DefineError) Unwrap() error { return e.Err }

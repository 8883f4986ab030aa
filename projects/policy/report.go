package policy

import (
	"os"
	"slices"
)

// Report says what confines a project's commands on this node: `project
// get` shows it, so what is enforced is never a guess.
type Report struct {
	// RunCommand is "confined" (everything promised holds), "weaker"
	// (it runs with less, as the operator and the policy allow: Reason
	// says what is missing), "refused" (Reason says why and what to do)
	// or "not offered" (the policy lists no program).
	RunCommand string `json:"run_command"`
	Reason     string `json:"reason,omitempty"`
	// Confinement is what this kernel enforces (Confinement.String).
	Confinement string `json:"confinement"`
	// Network is the policy's commands.network.
	Network bool `json:"network"`
	// Reads are what commands may read besides their project root and
	// their /tmp: the SystemReads present on this machine and the
	// paths the node's operator added.
	Reads []string `json:"reads"`
	// Hidden counts the paths covered wherever the reads would show them:
	// the node's data dir, its configuration, the other projects.
	Hidden int `json:"hidden"`
	// Limits are each call's limits, the node's caps applied.
	Limits Limits `json:"limits"`
	// ProcessesBoundBy names what holds Limits.Processes ("" for nothing).
	ProcessesBoundBy string `json:"processes_bound_by"`
}

// Report describes the confinement of s's commands under c (Protection()
// for this node).
func (s *Sandbox) Report(c Confinement) Report {
	r := Report{
		Confinement:      c.String(),
		Network:          s.Policy.Commands.Network,
		Limits:           s.Limits(),
		ProcessesBoundBy: c.ProcessBound(),
		Hidden:           len(s.hiddenFromCommands()),
	}
	for _, p := range systemReads {
		if _, err := os.Lstat(p); err == nil {
			r.Reads = append(r.Reads, p)
		}
	}
	for _, p := range s.Host.reads() {
		if !slices.Contains(r.Reads, p) {
			r.Reads = append(r.Reads, p)
		}
	}
	weaker := s.Host.allowWeaker()
	spec := &CommandSpec{
		Network:           s.Policy.Commands.Network,
		Protect:           s.Policy.protected(),
		WithoutLandlock:   weaker && s.Policy.Commands.WithoutLandlock == "warn",
		WithoutNamespaces: weaker && s.Policy.Commands.WithoutNamespaces == "warn",
	}
	warning, err := c.admit(spec)
	switch {
	case len(s.Policy.Commands.Programs) == 0:
		r.RunCommand, r.Reason = "not offered", "commands.programs of the project's policy lists no program"
	case err != nil:
		r.RunCommand, r.Reason = "refused", err.Error()
	case warning != "":
		r.RunCommand, r.Reason = "weaker", warning
	default:
		r.RunCommand = "confined"
	}
	return r
}

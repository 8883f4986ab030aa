package policy

import (
	"github.com/jido-bus/jido-bus/bus"
)

// CommandRules are the rules of run_command.
type CommandRules struct {
	// Programs run_command may start, by base name ("go", "git"), looked
	// up on the scrubbed PATH; an entry holding a '/' allows that exact
	// absolute program, compared after resolving symlinks. Listing a
	// shell, an interpreter or a launcher (sh, bash, python, env, xargs)
	// allows anything it can start.
	Programs []string `yaml:"programs"`
	// Env names the variables passed from the node's environment, among
	// those its operator lets commands inherit (Inherit); every other one
	// is dropped. Nil passes all the operator allows. HOME is always the
	// project root, TMPDIR the command's private temporary folder.
	Env []string `yaml:"env"`
	// Network lets a command open sockets. Without it a command runs in
	// a network namespace of its own with nothing in it (no interface up,
	// no route: neither TCP nor UDP nor the host's abstract unix sockets),
	// and sees no unix socket file outside its project and temp dir.
	Network bool `yaml:"network"`
	// Limits bound each call's resources; a key left out keeps
	// DefaultLimits' value, and the node's operator caps them all
	// (Host.MaxLimits).
	Limits Limits `yaml:"limits"`
	// WithoutLandlock asks to run commands where the kernel has no
	// Landlock (their namespaces still confine them): "refuse" (the
	// default) or "warn". It takes effect only where the node's operator
	// allows weaker confinement (Host.AllowWeaker): a project cannot lift
	// its own confinement.
	WithoutLandlock string `yaml:"without_landlock"`
	// WithoutNamespaces asks to run commands where jido-bus cannot give
	// them namespaces of their own (user, mount, PID, network), or cannot
	// bound their processes: "refuse" (the default) or "warn", and then
	// only Landlock and resource limits confine them: they read the
	// system paths and the operator's (Landlock), they may write .jido and
	// .git, their children may outlive them, and without Landlock ABI 4
	// they reach the network. Like WithoutLandlock, it needs the node's
	// operator to allow weaker confinement.
	WithoutNamespaces string `yaml:"without_namespaces"`
}

func defaultCommands() CommandRules {
	return CommandRules{WithoutLandlock: "refuse", WithoutNamespaces: "refuse"}
}

func (c CommandRules) validate() error {
	switch c.WithoutLandlock {
	case "refuse", "warn":
	default:
		return bus.Errorf(bus.ReasonInvalidRequest, "commands.without_landlock is %q; use refuse or warn", c.WithoutLandlock)
	}
	switch c.WithoutNamespaces {
	case "refuse", "warn":
	default:
		return bus.Errorf(bus.ReasonInvalidRequest, "commands.without_namespaces is %q; use refuse or warn", c.WithoutNamespaces)
	}
	if err := c.Limits.Validate("commands.limits"); err != nil {
		return err
	}
	for _, p := range c.Programs {
		if p == "" {
			return bus.Errorf(bus.ReasonInvalidRequest, "commands.programs holds an empty name")
		}
	}
	for _, e := range c.Env {
		if e == "" || e == "HOME" || e == "TMPDIR" {
			return bus.Errorf(bus.ReasonInvalidRequest, "commands.env holds %q; HOME is always the project root and TMPDIR the command's private temporary folder", e)
		}
	}
	return nil
}

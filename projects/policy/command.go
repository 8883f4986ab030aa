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
	// Network lets a command open sockets (enforced by the Landlock helper).
	Network bool `yaml:"network"`
	// WithoutLandlock is what to do where the kernel has no Landlock:
	// "refuse" (the default) or "warn" (run unconfined, with a warning).
	WithoutLandlock string `yaml:"without_landlock"`
	// WithoutNamespaces is what to do where the system does not let
	// jido-bus create an unprivileged user and mount namespace, which is
	// how a command is kept from writing .jido and .git (Landlock cannot
	// take writes away from part of the writable root): "refuse" (the
	// default) or "warn" (run with .jido and .git writable, with a warning).
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

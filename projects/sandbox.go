package projects

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// SandboxConfig is what the node's operator decides about every project's
// commands (run_command) beyond the projects' policies, which cannot
// change it: what they may read besides the system's paths, what is
// hidden from them, the most their limits may be, and whether they may
// run with weaker confinement than promised where the kernel lacks a
// feature. The zero value is the strictest.
type SandboxConfig struct {
	// Read lists absolute paths every project's commands may read.
	Read []string
	// ProjectRead adds paths for the project opened on the root given
	// as the key (absolute; compared as real paths).
	ProjectRead map[string][]string
	// Hide lists absolute paths no command may read wherever Read would
	// show them: the node's configuration and key files. The node's data
	// dir and every other open project's root are hidden always.
	Hide []string
	// MaxLimits cap the limits a project's policy may ask for; zero
	// fields are policy.DefaultLimits'.
	MaxLimits policy.Limits
	// AllowWeaker lets a project whose policy asks for it
	// (commands.without_landlock, without_namespaces: warn) run commands
	// with less confinement than promised where the kernel lacks a
	// feature; without it such commands are refused.
	AllowWeaker bool
}

// check refuses a configuration that would confine nothing or cannot be
// applied, and resolves ProjectRead's roots to real paths.
func (c *SandboxConfig) check() error {
	if err := policy.CheckReadPaths("sandbox.read", c.Read); err != nil {
		return err
	}
	if err := policy.CheckReadPaths("sandbox.hide", c.Hide); err != nil {
		return err
	}
	if err := c.MaxLimits.Validate("sandbox.limits"); err != nil {
		return err
	}
	resolved := map[string][]string{}
	for root, paths := range c.ProjectRead {
		if !filepath.IsAbs(root) {
			return fmt.Errorf("sandbox.projects: root %q is not an absolute path", root)
		}
		if err := policy.CheckReadPaths("sandbox.projects["+root+"].read", paths); err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		resolved[filepath.Clean(root)] = append(resolved[filepath.Clean(root)], paths...)
	}
	c.ProjectRead = resolved
	return nil
}

// host is the operator's rules for the commands of the project on root.
func (e *Engine) host(root string) *policy.Host {
	c := e.cfg.Sandbox
	return &policy.Host{
		Read:        append(slices.Clone(c.Read), c.ProjectRead[root]...),
		Hide:        e.hiddenFromCommands,
		MaxLimits:   c.MaxLimits,
		AllowWeaker: c.AllowWeaker,
	}
}

// hiddenFromCommands is what no command may read: the node's data dir, the
// operator's Hide and the roots of every project open or opening (each
// sandbox leaves its own root out).
func (e *Engine) hiddenFromCommands() []string {
	out := slices.Clone(e.cfg.Sandbox.Hide)
	if e.nodeDir.path != "" {
		out = append(out, e.nodeDir.path)
	}
	out = append(out, e.worktreeDirs()...)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, pl := range e.places {
		out = append(out, pl.path)
	}
	return out
}

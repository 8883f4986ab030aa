package policy

import (
	"path/filepath"
	"slices"

	"github.com/jido-bus/jido-bus/bus"
)

// Host is what the node's operator decides about every command of a
// project, beyond the project's policy: a policy, from the project's own
// .jido/policy.yaml (a cloned repository's choice) or given at open (by a
// client with the operator role, who drives the node but does not run the
// machine), cannot widen what a command reads, raise its limits past the
// caps or lift its confinement. A Host is immutable once built and safe
// for concurrent use; the zero value is the strictest: nothing readable
// beyond SystemReads, the default caps, nothing weaker than promised.
type Host struct {
	// Read lists absolute paths (folders or files) a command may read
	// besides its project root, its temp dir and SystemReads: a toolchain
	// in /opt, a shared library checkout.
	Read []string
	// Hide returns the absolute paths no command may read whatever Read
	// and SystemReads allow: the node's data dir, its configuration and
	// key files, every other open project's root. It is asked at each
	// command, so a project opened later is hidden from the commands
	// started after. Nil hides nothing.
	Hide func() []string
	// MaxLimits cap what a project's policy may ask for; zero fields are
	// DefaultLimits'.
	MaxLimits Limits
	// AllowWeaker lets a command run with less confinement than this
	// package promises where the kernel lacks a feature, when the
	// project's policy asks for it as well (commands.without_landlock or
	// without_namespaces: warn); every result then carries a warning. False
	// refuses such a command, naming what is missing.
	AllowWeaker bool
}

// CheckReadPaths refuses a list of read paths that is not absolute and
// clean, or that names "/" (which would leave nothing confined); where
// names the setting for the message.
func CheckReadPaths(where string, paths []string) error {
	for _, p := range paths {
		switch {
		case !filepath.IsAbs(p) || filepath.Clean(p) != p:
			return bus.Errorf(bus.ReasonInvalidRequest, "%s: %q is not a clean absolute path; give folders such as /opt/go", where, p)
		case p == "/":
			return bus.Errorf(bus.ReasonInvalidRequest, "%s: / would let commands read everything; list the folders they need", where)
		}
	}
	return nil
}

func (h *Host) maxLimits() Limits {
	if h == nil {
		return DefaultLimits
	}
	return h.MaxLimits.withDefaults(DefaultLimits)
}

func (h *Host) hidden() []string {
	if h == nil || h.Hide == nil {
		return nil
	}
	return slices.Clone(h.Hide())
}

func (h *Host) reads() []string {
	if h == nil {
		return nil
	}
	return slices.Clone(h.Read)
}

func (h *Host) allowWeaker() bool { return h != nil && h.AllowWeaker }

package policy

import (
	"fmt"
	"strings"
)

// Confinement is what the kernel lets the sandbox-exec helper enforce on a
// command, from the Landlock ABI version it offers.
type Confinement struct {
	ABI        int  // Landlock ABI version; 0 where the kernel has none
	Filesystem bool // writes outside the root (and the command's temp dir) are refused (ABI 1+)
	TCP        bool // TCP bind and connect are refused unless the policy allows the network (ABI 4+)
	Signals    bool // signals and abstract unix sockets cannot reach processes outside the sandbox (ABI 6+)
	UnixPaths  bool // connecting to pathname unix sockets outside is refused (ABI 9+)
	UDP        bool // UDP bind and send are refused unless the network is allowed (ABI 10+)
	// Namespaces: the helper can run a command in a user and mount
	// namespace of its own, where .jido and .git are mounted read-only.
	Namespaces bool
}

func confinementFor(abi int) Confinement {
	return Confinement{ABI: abi, Filesystem: abi >= 1, TCP: abi >= 4, Signals: abi >= 6, UnixPaths: abi >= 9, UDP: abi >= 10}
}

// String says in one line what is enforced and what is not, for `project
// get` and for warnings.
func (c Confinement) String() string {
	ns := "; .jido and .git read-only to commands (user namespaces)"
	if !c.Namespaces {
		ns = "; .jido and .git not protected from commands (no user namespaces)"
	}
	if !c.Filesystem {
		return "none: this kernel has no Landlock, commands run unconfined" + ns
	}
	var on, off []string
	add := func(ok bool, what string) {
		if ok {
			on = append(on, what)
		} else {
			off = append(off, what)
		}
	}
	add(c.Filesystem, "writes only in the project root")
	add(c.TCP, "TCP blocked unless allowed")
	add(c.Signals, "signals and abstract sockets scoped")
	add(c.UnixPaths, "unix sockets blocked")
	add(c.UDP, "UDP blocked unless allowed")
	s := fmt.Sprintf("landlock ABI %d: %s", c.ABI, strings.Join(on, ", "))
	if len(off) > 0 {
		s += "; not enforced by this kernel: " + strings.Join(off, ", ")
	}
	return s + ns
}

// admit decides whether spec may run under c: a command needs file system
// confinement, TCP blocking unless its policy allows the network, and
// namespaces to keep its protected entries read-only. What is missing
// refuses the command (commands.without_landlock, without_namespaces:
// refuse) or is returned as a warning (warn).
func (c Confinement) admit(spec *CommandSpec) (warning string, err error) {
	warning, err = c.admitLandlock(spec)
	if err != nil || len(spec.Protect) == 0 || c.Namespaces {
		return warning, err
	}
	what := strings.Join(spec.Protect, " and ")
	if spec.WithoutNamespaces != "warn" {
		return "", denied("run_command is refused: this system does not let jido-bus create a user namespace, which is how %s are kept read-only to commands, "+
			"and the project's policy says commands.without_namespaces: refuse; enable unprivileged user namespaces (sysctl user.max_user_namespaces > 0; "+
			"kernel.unprivileged_userns_clone=1 on Debian; kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu; a container needs a seccomp profile allowing them), "+
			"or set without_namespaces: warn to run commands with %s writable", what, what)
	}
	w := fmt.Sprintf("run_command runs with %s writable: this system does not let jido-bus create the user namespace that keeps them read-only", what)
	if warning != "" {
		w = warning + "; " + w
	}
	return w, nil
}

func (c Confinement) admitLandlock(spec *CommandSpec) (warning string, err error) {
	var missing []string
	if !c.Filesystem {
		missing = append(missing, "file system confinement")
	}
	if !spec.Network && !c.TCP {
		missing = append(missing, "network blocking (Landlock ABI 4)")
	}
	if len(missing) == 0 {
		return "", nil
	}
	what := strings.Join(missing, " and ")
	if spec.WithoutLandlock == "warn" {
		return fmt.Sprintf("run_command runs without %s: the kernel offers %s", what, c), nil
	}
	return "", denied("run_command is refused: this kernel lacks %s (it offers %s) and the project's policy says commands.without_landlock: refuse; "+
		"run on a kernel with Landlock (5.13+, 6.7+ for the network), or set without_landlock: warn to run commands unconfined", what, c)
}

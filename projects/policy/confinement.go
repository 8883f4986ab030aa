package policy

import (
	"fmt"
	"strings"
)

// Confinement is what the running kernel lets the sandbox-exec helper
// enforce on a command.
type Confinement struct {
	ABI        int  // Landlock ABI version; 0 where the kernel has none
	Filesystem bool // Landlock confines reads and writes to the allow-list (ABI 1+)
	TCP        bool // Landlock refuses TCP bind and connect unless the policy allows the network (ABI 4+)
	Signals    bool // signals and abstract unix sockets cannot reach processes outside the sandbox (ABI 6+)
	UnixPaths  bool // Landlock refuses connecting to pathname unix sockets outside (ABI 9+)
	UDP        bool // Landlock refuses UDP bind and send unless the network is allowed (ABI 10+)
	// Namespaces: each command runs in user, mount, PID and IPC
	// namespaces of its own (and a network namespace unless the policy
	// allows the network): it sees only its project, a private /tmp and
	// the system's programs, .jido and .git are read-only to it, and
	// nothing it starts outlives it.
	Namespaces bool
	// PIDMax: a PID namespace may have its own pid_max (Linux 6.14+),
	// which bounds a command's processes whoever runs the node.
	PIDMax bool
	// Root: the node runs as root, whose processes RLIMIT_NPROC does not
	// bound (the kernel exempts the initial root user).
	Root bool
}

func confinementFor(abi int) Confinement {
	return Confinement{ABI: abi, Filesystem: abi >= 1, TCP: abi >= 4, Signals: abi >= 6, UnixPaths: abi >= 9, UDP: abi >= 10}
}

// Mechanisms bounding a command's processes (ProcessBound).
const (
	BoundPIDMax      = "pid_max of the command's PID namespace"
	BoundNProcUserNS = "RLIMIT_NPROC in the command's user namespace"
)

// ProcessBound names what keeps a command from starting more processes
// than its limit, "" when nothing does here. Without a user namespace of
// its own RLIMIT_NPROC would count every process of the node's user, so it
// is not used.
func (c Confinement) ProcessBound() string {
	switch {
	case !c.Namespaces:
		return ""
	case c.PIDMax:
		return BoundPIDMax
	case !c.Root:
		return BoundNProcUserNS
	}
	return ""
}

// String says in one line what is enforced and what is not, for `project
// get`, the project's log and warnings.
func (c Confinement) String() string {
	var parts []string
	if c.Namespaces {
		parts = append(parts, "namespaces: each command sees only its project, a private /tmp and the system's programs, "+
			"has no network unless allowed, and nothing it starts outlives it; .jido and .git read-only to commands (user namespaces)")
	} else {
		parts = append(parts, "no namespaces: commands see the whole machine except what Landlock refuses, their children may outlive them; "+
			".jido and .git not protected from commands (no user namespaces)")
	}
	if b := c.ProcessBound(); b != "" {
		parts = append(parts, "processes bounded by "+b)
	} else {
		parts = append(parts, "processes not bounded (per-PID-namespace pid_max needs Linux 6.14+, and RLIMIT_NPROC does not bound root)")
	}
	if !c.Filesystem {
		return strings.Join(append(parts, "no Landlock"), "; ")
	}
	var on, off []string
	add := func(ok bool, what string) {
		if ok {
			on = append(on, what)
		} else {
			off = append(off, what)
		}
	}
	add(c.Filesystem, "reads and writes confined")
	add(c.TCP, "TCP blocked unless allowed")
	add(c.Signals, "signals and abstract sockets scoped")
	add(c.UnixPaths, "unix sockets blocked")
	add(c.UDP, "UDP blocked unless allowed")
	s := fmt.Sprintf("landlock ABI %d: %s", c.ABI, strings.Join(on, ", "))
	if len(off) > 0 {
		s += "; not enforced by this kernel's Landlock: " + strings.Join(off, ", ")
		if c.Namespaces {
			s += " (the command's namespaces do it)"
		}
	}
	return strings.Join(append(parts, s), "; ")
}

// weakerHowTo is what a refusal says to do about a missing feature.
const weakerHowTo = "the node's operator may allow weaker confinement (serve --sandbox-allow-weaker, or sandbox.allow_weaker: true in serve's --config), " +
	"and the project's policy must then ask for it (commands.%s: warn)"

// admit decides whether spec may run under c. A command needs its own
// namespaces with a bound on its processes, and Landlock. What is missing
// refuses the command unless spec says it may run without it (the node's
// operator allows it and the project's policy asks), in which case it is
// returned as a warning that every result carries.
func (c Confinement) admit(spec *CommandSpec) (warning string, err error) {
	type lack struct {
		what, key string
		allowed   bool
	}
	var lacks []lack
	if !c.Namespaces {
		lacks = append(lacks, lack{"namespaces of its own (this system does not let jido-bus create user namespaces: " +
			"enable them with sysctl user.max_user_namespaces > 0; kernel.unprivileged_userns_clone=1 on Debian; " +
			"kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu; a container needs a seccomp profile allowing them), " +
			"without which only Landlock confines what it reads, it may change " + strings.Join(spec.Protect, " and ") +
			", the children it leaves may outlive it, and of its limits only file_size, cpu_seconds (per process) and output hold",
			"without_namespaces", spec.WithoutNamespaces})
	} else if c.ProcessBound() == "" {
		lacks = append(lacks, lack{"a bound on its processes (a PID namespace's own pid_max needs Linux 6.14+, and RLIMIT_NPROC does not bound a node running as root)",
			"without_namespaces", spec.WithoutNamespaces})
	}
	if !c.Filesystem {
		lacks = append(lacks, lack{"Landlock (Linux 5.13+)", "without_landlock", spec.WithoutLandlock})
	}
	if !c.Namespaces && !spec.Network && !c.TCP {
		lacks = append(lacks, lack{"a way to block its network (a network namespace, or Landlock ABI 4: Linux 6.7+)", "without_landlock", spec.WithoutLandlock})
	}
	var warned []string
	for _, l := range lacks {
		if !l.allowed {
			return "", denied("run_command is refused: this system cannot give the command %s (it offers %s); "+weakerHowTo, l.what, c, l.key)
		}
		warned = append(warned, l.what)
	}
	if len(warned) == 0 {
		return "", nil
	}
	return "run_command runs with weaker confinement than promised, as the node's operator and the project's policy allow: it lacks " +
		strings.Join(warned, "; and "), nil
}

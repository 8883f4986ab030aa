//go:build linux

package policy

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Protection reports what the running kernel lets run_command enforce.
func Protection() Confinement {
	c := landlockConfinement()
	c.Namespaces = namespacesWork()
	c.PIDMax = pidMaxPerNamespace()
	c.Root = os.Geteuid() == 0
	return c
}

// landlockConfinement is Protection without the namespace probe: the
// helper knows from its spec whether it runs in namespaces.
func landlockConfinement() Confinement {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 0 {
		abi = 0
	}
	return confinementFor(abi)
}

// pidMaxPerNamespace is whether the kernel gives each PID namespace its
// own pid_max (Linux 6.14). The helper checks it again by setting it: a
// kernel that refuses fails the command rather than running it unbounded.
func pidMaxPerNamespace() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	major, minor, ok := kernelVersion(unix.ByteSliceToString(u.Release[:]))
	return ok && (major > 6 || major == 6 && minor >= 14)
}

// kernelVersion reads "6.18.44-fc-v657" as 6, 18.
func kernelVersion(release string) (major, minor int, ok bool) {
	a, rest, _ := strings.Cut(release, ".")
	b := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))] // "18" of "18.44-fc"
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return major, minor, err1 == nil && err2 == nil
}

// landlockConfigs are go-landlock's configurations by ABI version; a kernel
// newer than the last is handled as the last.
var landlockConfigs = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// confine applies Landlock to the helper (every thread, and so the
// program it starts) for spec: the allow-list readable and executable
// (SystemReads, spec.Read, the program, and in namespaces the command's
// own /proc), the root and the temp dir writable, the devices of devices,
// TCP (and UDP from ABI 10) closed unless spec.Network. In namespaces the
// command's view holds nothing else anyway; Landlock is the second wall,
// and without namespaces the only one. It uses exactly the ABI the kernel
// offers (never go-landlock's BestEffort, which silently enforces nothing
// when a rule cannot be downgraded), so an error here means the
// confinement admit promised did not happen.
func confine(spec *CommandSpec, c Confinement) error {
	if c.ABI == 0 {
		return nil // admitted without Landlock: the operator and the policy allow it
	}
	cfg := landlockConfigs[min(c.ABI, len(landlockConfigs))-1]
	if spec.Network {
		cfg.HandledAccessNet = 0
	}
	temp := spec.TempDir
	if spec.Namespaces {
		temp = commandTemp
	}
	var roDirs, roFiles, rwFiles []string
	for _, p := range readable(spec) {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue // missing here: nothing to allow
		case fi.IsDir():
			roDirs = append(roDirs, p)
		default:
			roFiles = append(roFiles, p)
		}
	}
	for _, d := range devices {
		if d.write {
			rwFiles = append(rwFiles, d.name)
		} else {
			roFiles = append(roFiles, d.name)
		}
	}
	rw := func(dir string) landlock.Rule {
		r := landlock.RWDirs(dir)
		if c.ABI >= 2 {
			r = r.WithRefer() // moving files between folders inside the root
		}
		return r
	}
	rules := []landlock.Rule{
		landlock.RODirs(roDirs...).IgnoreIfMissing(), landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		landlock.RWFiles(rwFiles...).IgnoreIfMissing(), rw(spec.Root),
	}
	if temp != "" {
		rules = append(rules, rw(temp))
	}
	if spec.Namespaces {
		// Names only, anywhere in the view: listing / or /dev shows what
		// the view holds, which is the allow-list itself.
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(llsys.AccessFSReadDir), "/"))
	}
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("apply landlock (ABI %d): %w", c.ABI, err)
	}
	return nil
}

// readable is what Landlock lets spec's command read besides its root and
// temp dir: SystemReads, the operator's paths, the program, and in
// namespaces its own /proc (a fresh one, showing its processes only).
func readable(spec *CommandSpec) []string {
	out := append(append([]string(nil), systemReads...), spec.Read...)
	out = append(out, spec.Program)
	if spec.Namespaces {
		out = append(out, "/proc")
	}
	return out
}

//go:build linux

package policy

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Protection reports what the running kernel lets run_command enforce.
func Protection() Confinement {
	c := landlockConfinement()
	c.Namespaces = namespacesWork()
	return c
}

// landlockConfinement is Protection without the namespace probe: the
// helper knows from its spec whether it runs in a namespace.
func landlockConfinement() Confinement {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 0 {
		abi = 0
	}
	return confinementFor(abi)
}

// landlockConfigs are go-landlock's configurations by ABI version; a kernel
// newer than the last is handled as the last.
var landlockConfigs = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// confine applies Landlock to the calling process for spec: everything
// readable and executable, the root and the temp dir writable, /dev/null
// writable, TCP (and UDP from ABI 10) closed unless spec.Network. It uses
// exactly the ABI the kernel offers (never go-landlock's BestEffort, which
// silently enforces nothing when a rule cannot be downgraded), so an error
// here means the confinement admit promised did not happen.
func confine(spec *CommandSpec, c Confinement) error {
	if c.ABI == 0 {
		return nil // admitted without Landlock: commands.without_landlock is warn
	}
	cfg := landlockConfigs[min(c.ABI, len(landlockConfigs))-1]
	if spec.Network {
		cfg.HandledAccessNet = 0
	}
	rw := func(dir string) landlock.Rule {
		r := landlock.RWDirs(dir)
		if c.ABI >= 2 {
			r = r.WithRefer() // moving files between folders inside the root
		}
		return r
	}
	rules := []landlock.Rule{landlock.RODirs("/"), rw(spec.Root), landlock.RWFiles("/dev/null")}
	if spec.TempDir != "" {
		rules = append(rules, rw(spec.TempDir))
	}
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("apply landlock (ABI %d): %w", c.ABI, err)
	}
	return nil
}

//go:build unix

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/jido-bus/jido-bus/bus"
	"golang.org/x/sys/unix"
)

// HelperArg is the hidden subcommand (`jido-bus sandbox-exec`) that Exec
// re-executes the running binary as.
const HelperArg = "sandbox-exec"

// helperStatusFD is the helper's status pipe: closed on exec (nothing
// written) when the program started, one JSON error when it did not.
const helperStatusFD = 3

// maxSpec bounds the spec the helper reads.
const maxSpec = 4 << 20

// helperStatus is the helper's report of a command that did not start.
type helperStatus struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// HelperMain is the sandbox-exec helper: it reads a CommandSpec (JSON) on
// stdin, points stdin at /dev/null, enters the working directory, applies
// Landlock and execve's the program, so the program inherits the
// confinement and cannot lift it. It returns (an exit code) only when the
// command could not start; the reason goes to the status pipe Exec holds.
// It is not meant to be run by hand.
func HelperMain() int {
	var st unix.Stat_t
	if unix.Fstat(helperStatusFD, &st) != nil {
		fmt.Fprintln(os.Stderr, "jido-bus sandbox-exec is internal: jido-bus runs it to confine run_command; it is not a command to run by hand")
		return 2
	}
	syscall.CloseOnExec(helperStatusFD)
	status := os.NewFile(helperStatusFD, "status")
	err := helperRun(os.Stdin)
	e := bus.AsError(err) // the type word travels in its own member, not twice in the message
	s := helperStatus{Type: e.Type, Message: e.Message}
	json.NewEncoder(status).Encode(s)
	return 127
}

func helperRun(stdin io.Reader) error {
	// Capabilities are per thread and execve keeps the calling thread's:
	// every step below and the exec run on this one.
	runtime.LockOSThread()
	parent := os.Getppid()
	data, err := io.ReadAll(io.LimitReader(stdin, maxSpec+1))
	if err != nil {
		return fmt.Errorf("sandbox-exec: read the command spec: %w", err)
	}
	if len(data) > maxSpec {
		return bus.Errorf(bus.ReasonTooLarge, "sandbox-exec: the command spec is larger than %d bytes", maxSpec)
	}
	var spec CommandSpec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return bus.Errorf(bus.ReasonMalformed, "sandbox-exec: the command spec is not valid JSON: %v", err)
	}
	if err := spec.check(); err != nil {
		return err
	}
	if spec.MountNS {
		// Before entering the working directory: a directory entered
		// before the mounts would still be the writable one.
		if err := protectEntries(&spec); err != nil {
			return denied("sandbox-exec: could not keep %s read-only (%v); set commands.without_namespaces: warn to run commands without this protection", strings.Join(spec.Protect, " and "), err)
		}
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("sandbox-exec: %w", err)
		}
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("sandbox-exec: %w", err)
	}
	if err := unix.Dup2(int(devnull.Fd()), 0); err != nil {
		return fmt.Errorf("sandbox-exec: stdin from /dev/null: %w", err)
	}
	devnull.Close()
	if err := os.Chdir(spec.Dir); err != nil {
		return fmt.Errorf("sandbox-exec: enter %s: %w", spec.DirRel, err)
	}
	// The directory was resolved inside the root by the parent; had a
	// component been swapped for a link since, the kernel's idea of the
	// working directory now differs.
	if wd, err := unix.Getwd(); err != nil || wd != spec.Dir {
		return outsideRoot(spec.DirRel, "changed into a link between the check and the start of the command (it is now %s)", wd)
	}
	prot := landlockConfinement()
	prot.Namespaces = spec.MountNS
	if _, err := prot.admit(&spec); err != nil {
		return err
	}
	if err := confine(&spec, prot); err != nil {
		return fmt.Errorf("sandbox-exec: %w", err)
	}
	// Last, after every change of credentials (which clears it): the
	// program dies with the node, so a command nobody watches any more
	// cannot go on after the log recorded it interrupted.
	if err := dieWithParent(parent); err != nil {
		return fmt.Errorf("sandbox-exec: %w", err)
	}
	err = syscall.Exec(spec.Program, spec.Argv, spec.Env)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return bus.Errorf(bus.ReasonNotFound, "run_command program %s does not exist (any more)", spec.Program)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return denied("run_command program %s cannot be executed: %v", spec.Program, err)
	}
	return fmt.Errorf("run_command: execve %s: %w", spec.Program, err)
}

// check refuses a spec no Sandbox.Command could have built.
func (s *CommandSpec) check() error {
	bad := func(what string) error {
		return bus.Errorf(bus.ReasonInvalidRequest, "sandbox-exec: the command spec's %s", what)
	}
	switch {
	case !filepath.IsAbs(s.Program):
		return bad("program is not an absolute path")
	case len(s.Argv) == 0:
		return bad("argv is empty")
	case !filepath.IsAbs(s.Root) || s.Root == "/" || filepath.Clean(s.Root) != s.Root:
		return bad("root is not a clean absolute path below /")
	case !filepath.IsAbs(s.Dir) || filepath.Clean(s.Dir) != s.Dir || !isUnder(s.Root, s.Dir):
		return bad("working directory is not inside the root")
	case s.TempDir != "" && (!filepath.IsAbs(s.TempDir) || s.TempDir == "/"):
		return bad("temp dir is not an absolute path below /")
	case s.WithoutLandlock != "refuse" && s.WithoutLandlock != "warn":
		return bad("without_landlock is neither refuse nor warn")
	case s.WithoutNamespaces != "refuse" && s.WithoutNamespaces != "warn":
		return bad("without_namespaces is neither refuse nor warn")
	}
	for _, p := range s.Protect {
		if p == "" || p == "." || p == ".." || strings.ContainsRune(p, '/') {
			return bad("protected entries are not names directly under the root")
		}
	}
	return nil
}

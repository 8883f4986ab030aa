//go:build unix

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/jido-bus/jido-bus/bus"
	"golang.org/x/sys/unix"
)

// HelperArg is the hidden subcommand (`jido-bus sandbox-exec`) that Exec
// re-executes the running binary as.
const HelperArg = "sandbox-exec"

// helperStatusFD is the helper's status pipe: one JSON helperStatus,
// written when the command ended or could not start.
const helperStatusFD = 3

// helperStdinFD is the program's stdin when the spec says Stdio: the
// helper's own stdin carried the spec.
const helperStdinFD = 4

// maxSpec bounds the spec the helper reads.
const maxSpec = 4 << 20

// helperStatus is the helper's report: the command's end, or why it did
// not start (Type and Message, the error's).
type helperStatus struct {
	Type    string      `json:"type,omitempty"`
	Message string      `json:"message,omitempty"`
	Exit    *exitStatus `json:"exit,omitempty"`
}

// HelperMain is the sandbox-exec helper: it reads a CommandSpec (JSON) on
// stdin, confines itself (the command's namespaces and view of the file
// system, its resource limits, Landlock, no capabilities), points stdin at
// /dev/null, enters the working directory and starts the program as its
// child, which inherits all of it and cannot lift it. In the command's
// PID namespace it is the init: it reaps, watches the limits, and when the
// program ends everything the program left behind dies with it. It
// reports on the status pipe Exec holds and returns an exit code. It is
// not meant to be run by hand.
func HelperMain() int {
	var st unix.Stat_t
	if unix.Fstat(helperStatusFD, &st) != nil {
		fmt.Fprintln(os.Stderr, "jido-bus sandbox-exec is internal: jido-bus runs it to confine run_command; it is not a command to run by hand")
		return 2
	}
	syscall.CloseOnExec(helperStatusFD)
	status := os.NewFile(helperStatusFD, "status")
	exit, err := helperRun(os.Stdin)
	var s helperStatus
	if err != nil {
		e := bus.AsError(err) // the type word travels in its own member, not twice in the message
		s = helperStatus{Type: e.Type, Message: e.Message}
	} else {
		s.Exit = &exit
	}
	json.NewEncoder(status).Encode(s)
	if err != nil {
		return 127
	}
	return 0
}

func helperRun(stdin io.Reader) (exitStatus, error) {
	var spec CommandSpec
	data, err := io.ReadAll(io.LimitReader(stdin, maxSpec+1))
	if err != nil {
		return exitStatus{}, fmt.Errorf("sandbox-exec: read the command spec: %w", err)
	}
	if len(data) > maxSpec {
		return exitStatus{}, bus.Errorf(bus.ReasonTooLarge, "sandbox-exec: the command spec is larger than %d bytes", maxSpec)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return exitStatus{}, bus.Errorf(bus.ReasonMalformed, "sandbox-exec: the command spec is not valid JSON: %v", err)
	}
	if err := spec.check(); err != nil {
		return exitStatus{}, err
	}
	prot := landlockConfinement()
	prot.Namespaces = spec.Namespaces
	prot.Root = os.Geteuid() == 0
	var watch watcher
	nproc := false
	if spec.Namespaces {
		// As PID 1 the helper gets from the command only the signals it
		// handles, and Go handles these by exiting; received and dropped,
		// they cannot end the sandbox under the command. (The program
		// starts with them at their defaults.)
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
		// The view first: a working directory entered before it would
		// still be the node's.
		if err := buildView(&spec); err != nil {
			if _, ok := errors.AsType[*bus.Error](err); ok {
				return exitStatus{}, err
			}
			return exitStatus{}, bus.Errorf(bus.ReasonUnavailable, "sandbox-exec: could not build the command's view of the file system (%v); run_command is refused rather than run unconfined", err)
		}
		// The threads the helper needs, started while pids below
		// reservedPIDs are still given out: a command that takes every pid
		// it may have must not leave its init unable to run.
		warmThreads(helperWarmThreads)
		switch err := boundProcesses(spec.Limits.Processes); {
		case err == nil:
			prot.PIDMax = true
		case !prot.Root:
			nproc = true // RLIMIT_NPROC, counted in the command's user namespace
		case !spec.WithoutNamespaces:
			return exitStatus{}, denied("run_command is refused: its processes cannot be bounded here (%v; a PID namespace's own pid_max needs Linux 6.14+, "+
				"and RLIMIT_NPROC does not bound a node running as root); "+weakerHowTo, err, "without_namespaces")
		}
		watch = &nsWatch{limits: spec.Limits}
	}
	// Without a user namespace of its own RLIMIT_NPROC would count every
	// process of the node's user, the helper's threads included: it
	// bounds nothing of this call and could keep the helper from running.
	if err := setRlimits(spec.Limits, nproc); err != nil {
		return exitStatus{}, fmt.Errorf("sandbox-exec: %w", err)
	}
	setStdin := func() error { return commandStdin(spec.Stdin) }
	if spec.Stdio {
		setStdin = callerStdin
	}
	if err := setStdin(); err != nil {
		return exitStatus{}, err
	}
	if err := enterDir(&spec); err != nil {
		return exitStatus{}, err
	}
	if _, err := prot.admit(&spec); err != nil {
		return exitStatus{}, err
	}
	if err := confine(&spec, prot); err != nil {
		return exitStatus{}, fmt.Errorf("sandbox-exec: %w", err)
	}
	if spec.Namespaces {
		if err := dropCapabilities(); err != nil {
			return exitStatus{}, fmt.Errorf("sandbox-exec: %w", err)
		}
	}
	closeInheritedOnExec()
	// Last, after every change of credentials (which may clear it): the
	// helper, and in its PID namespace everything the command started,
	// dies with the node.
	if err := dieWithParent(helperStatusFD); err != nil {
		return exitStatus{}, bus.Errorf(bus.ReasonUnavailable, "sandbox-exec: %v", err)
	}
	return supervise(&spec, watch)
}

// callerStdin points fd 0 at the pipe Exec passed at helperStdinFD
// (ExecOptions.Stdin): a server's requests, for as long as it runs.
func callerStdin() error {
	if err := unix.Dup2(helperStdinFD, 0); err != nil {
		return fmt.Errorf("sandbox-exec: stdin from the caller's pipe: %w", err)
	}
	unix.Close(helperStdinFD)
	return nil
}

// helperWarmThreads is how many threads the helper starts before the
// command: more than it ever uses at once (it runs one goroutine at a
// time, GOMAXPROCS 1, and blocks in no system call for long).
const helperWarmThreads = 8

// warmThreads has the Go runtime start n threads and keep them idle, for
// later use: the runtime never ends a thread it may reuse, and it reuses
// an idle one before it creates another.
func warmThreads(n int) {
	runtime.GOMAXPROCS(1)
	var started, done sync.WaitGroup
	release := make(chan struct{})
	for range n {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			// A goroutine locked to its thread and waiting holds that
			// thread: n of them at once need n threads.
			runtime.LockOSThread()
			started.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	started.Wait()
	close(release)
	done.Wait()
}

// enterDir makes spec.Dir the working directory, with the error a caller
// can act on when it changed since the node resolved it: removed
// (not_found), replaced by a file (invalid_request), swapped for a link
// that leads elsewhere (outside_root).
func enterDir(spec *CommandSpec) error {
	err := os.Chdir(spec.Dir)
	if fi, lerr := os.Lstat(spec.Dir); err != nil && lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return outsideRoot(spec.DirRel, "was replaced by a link before the command started; give the folder it leads to as cwd, if that is inside the root")
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return bus.Errorf(bus.ReasonNotFound, "run_command working directory %s was removed before the command started; create it again or give another cwd", spec.DirRel)
	case errors.Is(err, syscall.ENOTDIR):
		return bus.Errorf(bus.ReasonInvalidRequest, "run_command working directory %s is no longer a directory (it changed before the command started)", spec.DirRel)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ELOOP):
		return outsideRoot(spec.DirRel, "changed into a link out of the root before the command started (%v)", err)
	case err != nil:
		return bus.Errorf(bus.ReasonUnavailable, "run_command could not enter its working directory %s: %v", spec.DirRel, err)
	}
	// The directory was resolved inside the root by the node; had a
	// component been swapped for a link since, the kernel's idea of the
	// working directory now differs.
	if wd, err := unix.Getwd(); err != nil || wd != spec.Dir {
		return outsideRoot(spec.DirRel, "changed into a link between the check and the start of the command (it is now %s)", wd)
	}
	return nil
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
	case s.Namespaces && (s.TempDir == "" || !filepath.IsAbs(s.TempDir)):
		return bad("namespaces need a temp dir to build the command's root on")
	case s.Limits.Processes <= 0 || s.Limits.FileSize <= 0 || s.Limits.Disk <= 0 || s.Limits.TempSize <= 0 || s.Limits.CPUSeconds <= 0:
		return bad("limits are not all set")
	}
	if err := CheckReadPaths("sandbox-exec: the command spec's read", s.Read); err != nil {
		return err
	}
	for _, p := range s.Hide {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return bad("hidden paths are not clean absolute paths below /")
		}
	}
	for _, p := range s.Protect {
		if p == "" || p == "." || p == ".." || strings.ContainsRune(p, '/') {
			return bad("protected entries are not names directly under the root")
		}
	}
	return nil
}

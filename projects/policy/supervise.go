//go:build unix

package policy

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// exitStatus is how a command ended, as the helper reports it to Exec.
type exitStatus struct {
	Code   int    `json:"code"`             // the program's exit code; -1 when a signal ended it
	Signal string `json:"signal,omitempty"` // the signal that ended it
	// Limit is the limit that ended the call (a Limit* name), "" when
	// none did; Detail is what was measured.
	Limit  string `json:"limit,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// watchInterval is how often the helper measures a running command
// against its limits. The kernel holds the hard bounds (pid_max,
// RLIMIT_FSIZE, the tmpfs's size) at every instant; the watch turns
// reaching them, and the CPU time of all the command's processes
// together, into the end of the call.
const watchInterval = 100 * time.Millisecond

// watcher measures a command that runs in its own PID namespace.
type watcher interface {
	// reaped accounts for a process the helper reaped (its CPU time
	// and that of the children it had reaped).
	reaped(ru *syscall.Rusage)
	// check says which limit the command has passed, if any.
	check() (limit, detail string)
	// killAll kills every process of the command.
	killAll()
}

// supervise starts spec's program as the helper's child, in the working
// directory and with the confinement the helper has already taken on, and
// reaps every process that ends below the helper (in a PID namespace the
// helper is their init, so orphans come to it) until the program itself
// ends. w, when set, is asked every watchInterval whether the command
// passed a limit; when it did, every process of the command is killed and
// the status names the limit.
func supervise(spec *CommandSpec, w watcher) (exitStatus, error) {
	// The program dies with the helper's thread that started it, which
	// stays locked to this goroutine until the program ends: without a
	// PID namespace nothing else would end it with the node.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Children are reaped when SIGCHLD says one ended, never by a
	// goroutine blocked in wait4: a blocked goroutine takes a thread, and
	// once a fork bomb has taken every pid of the namespace the Go
	// runtime could not start another one for the helper.
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	pid, err := syscall.ForkExec(spec.Program, spec.Argv, &syscall.ProcAttr{Env: spec.Env, Files: []uintptr{0, 1, 2}, Sys: programAttr()})
	switch {
	case errors.Is(err, syscall.ENOENT):
		return exitStatus{}, bus.Errorf(bus.ReasonNotFound, "run_command program %s does not exist (any more), or is not visible to commands: "+
			"a program outside the system paths needs its libraries listed in the node's sandbox.read", spec.Program)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return exitStatus{}, denied("run_command program %s cannot be executed: %v", spec.Program, err)
	case err != nil:
		return exitStatus{}, fmt.Errorf("run_command: start %s: %w", spec.Program, err)
	}
	limitCPU(pid, spec.Limits.CPUSeconds)

	var tick <-chan time.Time
	if w != nil {
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		tick = t.C
	}
	var st exitStatus
	for {
		// Reap every child that ended (signals coalesce: one SIGCHLD may
		// stand for many); the program's end ends the call.
		for {
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			p, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || p <= 0 {
				break
			}
			if w != nil {
				w.reaped(&ru)
			}
			if p != pid {
				continue // an orphan of the command, reaped by its init
			}
			st.Code = ws.ExitStatus()
			if ws.Signaled() {
				st.Code, st.Signal = -1, ws.Signal().String()
				if st.Limit == "" {
					st.Limit, st.Detail = signalLimit(ws.Signal(), spec.Limits)
				}
			}
			if st.Limit == "" && w != nil {
				st.Limit, st.Detail = w.check()
			}
			return st, nil
		}
		select {
		case <-chld:
		case <-tick:
			if st.Limit != "" {
				continue // killed already; waiting for the program's end
			}
			if st.Limit, st.Detail = w.check(); st.Limit != "" {
				w.killAll()
			}
		}
	}
}

// signalLimit names the limit whose signal ended the program: the kernel
// sends SIGXFSZ to a process writing past RLIMIT_FSIZE and SIGXCPU to one
// past RLIMIT_CPU.
func signalLimit(sig syscall.Signal, l Limits) (limit, detail string) {
	switch sig {
	case syscall.SIGXFSZ:
		return LimitFileSize, "the kernel stopped it with SIGXFSZ"
	case syscall.SIGXCPU:
		return LimitCPU, "the kernel stopped it with SIGXCPU"
	}
	return "", ""
}

// limitMessage is the error of a call a limit ended.
func limitMessage(program string, st exitStatus, l Limits) error {
	what := map[string]string{
		LimitProcesses: fmt.Sprintf("its limit of %d processes and threads at once", l.Processes),
		LimitFileSize:  fmt.Sprintf("its limit of %s for a file it writes", l.FileSize),
		LimitDisk:      fmt.Sprintf("its limit of %s written to files outside its temp dir", l.Disk),
		LimitTempSize:  fmt.Sprintf("its limit of %s for its temp dir (/tmp)", l.TempSize),
		LimitCPU:       fmt.Sprintf("its limit of %d CPU seconds (all its processes together)", l.CPUSeconds),
		LimitOutput:    fmt.Sprintf("its limit of %s of output", l.Output),
	}[st.Limit]
	return &bus.Error{Type: ReasonLimitExceeded, Message: fmt.Sprintf(
		"run_command %s reached %s (commands.limits.%s; %s) and was ended with everything it started; "+
			"if the project needs more, raise commands.limits.%s in its policy (the node's operator caps it: sandbox.limits in serve's --config)",
		program, what, st.Limit, st.Detail, st.Limit)}
}

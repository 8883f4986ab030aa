//go:build unix

package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// DefaultMaxOutput is Exec's output cap when neither the spec's limits
// nor ExecOptions set one.
const DefaultMaxOutput = 8 << 20

// drainGrace bounds the wait for a command's pipes to close once its
// helper is gone: in its PID namespace nothing of it is left then, but a
// command run without one may have left a process holding them.
const drainGrace = 2 * time.Second

// ExecOptions tune Exec. The zero value is the default.
type ExecOptions struct {
	// MaxOutput caps the bytes of stdout and stderr together kept, below
	// the spec's Limits.Output when smaller. A command that writes more is
	// killed (with everything it started) and Exec reports too_large with
	// the first bytes (limit_exceeded when the spec's limit is the smaller,
	// as for any limit): the cap is a safety limit, so a command printing
	// 1 GB costs neither memory nor the time to drain it. 0 leaves the
	// spec's limit (DefaultMaxOutput when that is 0).
	MaxOutput int64
	// Helper is the argv that starts the sandbox-exec helper; nil means the
	// running executable with HelperArg.
	Helper []string
	// Confinement is what the kernel is taken to offer; nil means
	// Protection(). A narrower one runs the command as on a kernel that
	// lacks the rest (the helper never uses more than it is told, and
	// never applies what the kernel has not).
	Confinement *Confinement
	// Stdin and Stdout, when set, are the program's stdin and stdout for
	// as long as it runs, instead of /dev/null and the captured output: a
	// server that speaks a protocol on them (an MCP server over stdio).
	// Both or neither are set. The caller keeps its ends of the pipes and
	// closes the ones it passed here once Exec returns. Stdout is then not
	// captured nor capped; stderr is, as always.
	Stdin, Stdout *os.File
}

// CommandResult is what a command did.
type CommandResult struct {
	ExitCode int           // the program's exit code; -1 when a signal ended it
	Signal   string        // the signal that ended it, "" when it exited
	Stdout   []byte        // at most the output cap of stdout and stderr together
	Stderr   []byte        //
	Killed   string        // why the command was ended early: "", "deadline", "canceled", "output_limit", or the Limit* name it reached
	Duration time.Duration // from start to the end of the process
	Warning  string        // set when it ran with less confinement than promised, or created a protected entry

	limitDetail string // what the helper measured when a limit ended the command
}

// Exec runs spec in the sandbox-exec helper and waits for it. The command
// runs confined (its namespaces and view of the file system, Landlock,
// its limits) and is ended with everything it started when it ends, when
// ctx is done, when it passes the output cap or when it reaches one of its
// limits.
//
// The error is nil only when the command ran and was not ended early: a
// refusal (the kernel lacks what confines it), a command that could not
// start, a kill at ctx's end (wrapping ctx.Err()), at ExecOptions.MaxOutput
// below the policy's output limit (too_large) or at a limit, the output's
// included (limit_exceeded). With a kill the result is
// returned too, with the output captured so far.
func Exec(ctx context.Context, spec *CommandSpec, opts ExecOptions) (*CommandResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("run_command %s not started: %w", spec.Program, err)
	}
	prot := Protection()
	if opts.Confinement != nil {
		prot = *opts.Confinement
	}
	warning, err := prot.admit(spec)
	if err != nil {
		return nil, err
	}
	helper := opts.Helper
	if helper == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("run_command: find the jido-bus executable for the sandbox helper: %w", err)
		}
		helper = []string{exe, HelperArg}
	}
	s := *spec
	s.Limits = spec.Limits.withDefaults(DefaultLimits)
	max := int64(s.Limits.Output)
	if opts.MaxOutput > 0 {
		max = min(max, opts.MaxOutput)
	}
	tmp, err := commandTempDir()
	if err != nil {
		return nil, fmt.Errorf("run_command: create its temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	s.TempDir = tmp
	s.Namespaces = prot.Namespaces
	if (opts.Stdin == nil) != (opts.Stdout == nil) {
		return nil, errors.New("run_command: ExecOptions.Stdin and Stdout go together")
	}
	s.Stdio = opts.Stdin != nil
	if s.Stdio && len(s.Stdin) > 0 {
		return nil, errors.New("run_command: a spec's Stdin and ExecOptions.Stdin are two standard inputs; give one")
	}
	absent := missingEntries(spec.Root, spec.Protect)
	temp := tmp
	attr := plainAttr()
	if s.Namespaces {
		temp = commandTemp
		attr = namespaceAttr(s.Network)
	}
	// TMPDIR is the command's own, whatever the environment passed on: a
	// program reads the first of two (glibc, Go), and the node's is not
	// in the command's view.
	s.Env = append(slices.DeleteFunc(slices.Clone(spec.Env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+temp)
	data, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("run_command: encode the spec: %w", err)
	}
	res, err := run(ctx, helper, attr, data, max, opts.Stdin, opts.Stdout)
	if res != nil {
		res.Warning = joinWarnings(warning, createdWarning(spec.Root, absent))
	}
	if err != nil {
		if res != nil && res.Killed != "" && res.Killed != "deadline" && res.Killed != "canceled" && res.Killed != "output_limit" {
			return res, limitError(spec.Argv[0], res, s.Limits)
		}
		if res != nil && res.Killed == "output_limit" && int64(s.Limits.Output) <= max {
			// The policy's own limit, not a smaller cap of the caller's:
			// a limit as the others, named so that one knows what to raise.
			return res, limitMessage(spec.Argv[0], exitStatus{Limit: LimitOutput, Detail: fmt.Sprintf("more than %d bytes of stdout and stderr together", max)}, s.Limits)
		}
		return res, fmt.Errorf("run_command %s: %w", spec.Argv[0], err)
	}
	return res, nil
}

// pipes are the three pipes between Exec and the helper; the write ends
// go to the child and are closed here once it started.
type pipes struct{ outR, outW, errR, errW, stR, stW *os.File }

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.outR, p.outW, err = os.Pipe(); err == nil {
		if p.errR, p.errW, err = os.Pipe(); err == nil {
			p.stR, p.stW, err = os.Pipe()
		}
	}
	if err != nil {
		p.closeWrite()
		p.closeRead()
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	return &p, nil
}

func (p *pipes) closeWrite() { closeAll(p.outW, p.errW, p.stW) }
func (p *pipes) closeRead()  { closeAll(p.outR, p.errR, p.stR) }

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func run(ctx context.Context, helper []string, attr *syscall.SysProcAttr, spec []byte, max int64, stdin, stdout *os.File) (*CommandResult, error) {
	p, err := newPipes()
	if err != nil {
		return nil, err
	}
	defer p.closeRead()
	cmd := exec.Command(helper[0], helper[1:]...)
	cmd.Stdin = bytes.NewReader(spec)
	cmd.Stdout, cmd.Stderr = p.outW, p.errW
	cmd.ExtraFiles = []*os.File{p.stW} // fd 3, helperStatusFD
	if stdin != nil {
		// fd 4, helperStdinFD: the helper reads the spec on its own
		// stdin, then gives this one to the program.
		cmd.ExtraFiles = append(cmd.ExtraFiles, stdin)
		cmd.Stdout = stdout
	}
	cmd.Env = []string{} // the helper needs nothing; the program gets spec.Env
	cmd.Dir = "/"
	cmd.SysProcAttr = attr // Setpgid, and with namespaces the new namespaces
	start := time.Now()
	// The parent-death signal (Linux) follows the thread that started the
	// helper, not the process: that thread stays locked to a goroutine
	// until the helper is gone, so that Go never ends it (and kills the
	// command) while the node lives.
	started, exited := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-exited
		}
	}()
	err = <-started
	p.closeWrite()
	if err != nil {
		return nil, fmt.Errorf("start the sandbox helper %s: %w", helper[0], err)
	}
	pgid := cmd.Process.Pid
	// The helper's process group: in namespaces killing the helper (the
	// command's init) ends everything; without, the group is what the
	// command started and did not move out of.
	killGroup := func() { syscall.Kill(-pgid, syscall.SIGKILL) }

	out := &capture{left: max, over: make(chan struct{})}
	var readers sync.WaitGroup
	readers.Go(func() { out.read(p.outR, &out.stdout) })
	readers.Go(func() { out.read(p.errR, &out.stderr) })
	status := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(p.stR, 64<<10))
		status <- b
	}()
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		close(exited)
		waited <- err
	}()

	res := &CommandResult{}
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		res.Killed = "canceled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.Killed = "deadline"
		}
		killGroup()
		waitErr = <-waited
	case <-out.over:
		res.Killed = "output_limit"
		killGroup()
		waitErr = <-waited
	}
	res.Duration = time.Since(start)
	// The helper is gone; what is left in its group goes too.
	killGroup()
	deadline := time.Now().Add(drainGrace)
	p.outR.SetReadDeadline(deadline)
	p.errR.SetReadDeadline(deadline)
	readers.Wait()
	st := <-status
	res.Stdout, res.Stderr = out.stdout.Bytes(), out.stderr.Bytes()

	var hs helperStatus
	if len(st) > 0 {
		if err := json.Unmarshal(st, &hs); err != nil {
			return nil, fmt.Errorf("the sandbox helper failed (%s): %s", bytes.TrimSpace(st), res.Stderr)
		}
		if hs.Exit == nil {
			return nil, &bus.Error{Type: typeOrInternal(hs.Type), Message: hs.Message}
		}
	}
	switch {
	case hs.Exit != nil:
		res.ExitCode, res.Signal = hs.Exit.Code, hs.Exit.Signal
		if res.Killed == "" && hs.Exit.Limit != "" {
			res.Killed = hs.Exit.Limit
			res.limitDetail = hs.Exit.Detail
		}
	case cmd.ProcessState != nil:
		// Killed before it could report (a deadline, the output cap).
		res.ExitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		}
		if res.Killed == "" {
			return nil, fmt.Errorf("the sandbox helper ended without a report (%s): %s", cmd.ProcessState, bytes.TrimSpace(res.Stderr))
		}
	default:
		return nil, fmt.Errorf("wait for the command: %w", waitErr)
	}
	switch res.Killed {
	case "":
		return res, nil
	case "output_limit":
		return res, bus.Errorf(bus.ReasonTooLarge, "the command wrote more than %d bytes of output and was killed; make it print less (or filter its output)", max)
	case "deadline", "canceled":
		return res, fmt.Errorf("killed with everything it started after %s: %w", res.Duration.Round(time.Millisecond), ctx.Err())
	}
	return res, errLimit
}

// errLimit tells Exec that a limit ended the command (res.Killed names it).
var errLimit = errors.New("a limit ended the command")

// limitError is the error of a call a limit ended.
func limitError(program string, res *CommandResult, l Limits) error {
	return limitMessage(program, exitStatus{Limit: res.Killed, Detail: res.limitDetail}, l)
}

func typeOrInternal(t string) string {
	if t == "" {
		return bus.ReasonInternal
	}
	return t
}

// capture keeps up to left bytes of a command's stdout and stderr together
// and closes over when more came.
type capture struct {
	mu             sync.Mutex
	left           int64
	stdout, stderr bytes.Buffer
	over           chan struct{}
	overOnce       sync.Once
}

func (c *capture) read(r io.Reader, into *bytes.Buffer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.mu.Lock()
			keep := min(int64(n), c.left)
			into.Write(buf[:keep])
			c.left -= keep
			c.mu.Unlock()
			if keep < int64(n) {
				c.overOnce.Do(func() { close(c.over) })
			}
		}
		if err != nil {
			return
		}
	}
}

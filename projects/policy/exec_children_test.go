//go:build linux

package policy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Nothing a command starts outlives its call (issue 20, item 2): its
// helper is the init of its PID namespace, so when the program ends, is
// killed at a deadline or canceled, the kernel kills every process left
// in the namespace, those that left the session with setsid included,
// before Exec returns.

// tagged returns a sleep argument no other process on the machine has (n
// tells the test's own apart), and the pids (on the host) of the processes
// sleeping with it. Any left when the test ends are killed: a failing test
// leaves nothing behind either.
func tagged(t *testing.T, n int) (arg string, running func() []int) {
	arg = fmt.Sprintf("%d.%d", 300+n, os.Getpid())
	running = func() []int {
		var pids []int
		files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !strings.Contains(string(b), "sleep\x00"+arg+"\x00") {
				continue
			}
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	t.Cleanup(func() {
		for _, pid := range running() {
			syscall.Kill(pid, syscall.SIGKILL) // ours alone: no other process has arg
		}
	})
	return arg, running
}

// leaver is a script whose child leaves the session and the process
// group with setsid and sleeps, writing child.pid once it runs; the
// script waits for that, then runs then.
func leaver(arg, then string) string {
	return "setsid sh -c 'echo $$ > child.pid; exec sleep " + arg + "' </dev/null >/dev/null 2>&1 & " +
		"while [ ! -s child.pid ]; do :; done; " + then
}

func TestExecLeavesNothingRunning(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	for i, c := range []struct {
		name    string
		then    string // what the script does once its child runs
		timeout time.Duration
		cancel  bool
		want    string // Killed
	}{
		{name: "returned", then: "echo started"},
		// Long enough for a race-built helper on a loaded machine to start
		// the child first.
		{name: "deadline", then: "sleep 100", timeout: 5 * time.Second, want: "deadline"},
		{name: "canceled", then: "sleep 100", cancel: true, want: "canceled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			arg, running := tagged(t, i)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, c.timeout)
				defer cancel()
			}
			if c.cancel {
				go func() {
					// Cancel once the child runs.
					for len(running()) == 0 && ctx.Err() == nil {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
			}
			res, err := execIn(t, ctx, f.proj, shPolicy, ExecOptions{}, "sh", "-c", leaver(arg, c.then))
			if c.want == "" && err != nil || c.want != "" && (res == nil || res.Killed != c.want) {
				t.Fatalf("got %+v, %v; want killed %q", res, err, c.want)
			}
			if _, err := os.Stat(filepath.Join(f.proj, "child.pid")); err != nil {
				t.Fatalf("the setsid child never ran: %v", err)
			}
			// The kernel reaps the namespace before the helper's own
			// exit is reported: no wait is needed.
			if pids := running(); len(pids) > 0 {
				t.Errorf("the command's setsid child (pids %v) outlived the call", pids)
			}
		})
	}
}

// The processes of one call do not see those of another, nor the node's:
// /proc is the namespace's own.
func TestExecSeesOnlyItsOwnProcesses(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	res := runSh(t, f.proj, "", `ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\0' ' '; echo; echo $$`)
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 3 {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	// The helper (1), sh, ls and grep (or fewer, as they end).
	if n, _ := strconv.Atoi(lines[0]); n == 0 || n > 4 {
		t.Errorf("the command sees %s processes: %s", lines[0], res.Stdout)
	}
	if !strings.Contains(lines[1], HelperArg) {
		t.Errorf("pid 1 of the command's namespace is %q, want the helper", lines[1])
	}
	if lines[2] == strconv.Itoa(os.Getpid()) {
		t.Errorf("the command's own pid %s is the node's", lines[2])
	}
}

// A descriptor the node inherited without close-on-exec (from whatever
// started it) does not reach the command: it gets stdin, stdout and
// stderr only.
func TestExecPassesNoInheritedDescriptor(t *testing.T) {
	defer goleak.VerifyNone(t)
	needLandlock(t, func(c Confinement) bool { return c.TCP })
	f := newFixture(t)
	fd, err := syscall.Dup(1) // no close-on-exec
	must(t, err)
	defer syscall.Close(fd)
	res := runSh(t, f.proj, "", "ls /proc/$$/fd")
	if got := strings.Fields(string(res.Stdout)); strings.Join(got, " ") != "0 1 2" {
		t.Errorf("the command holds descriptors %v (the node's %d leaked?), want 0 1 2; stderr %s", got, fd, res.Stderr)
	}
}

// The folder of a command whose node was killed with it running is removed
// by the next node that runs a command; a live node's are left alone.
func TestSweepTempDirsOfGoneNodes(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	must(t, gone.Run())
	stale := filepath.Join(dir, fmt.Sprintf("%s%d-123", tempPrefix, gone.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf("%s%d-456", tempPrefix, os.Getppid()))
	other := filepath.Join(dir, "jido-cmd-notapid")
	for _, d := range []string{stale, live, other} {
		must(t, os.MkdirAll(filepath.Join(d, "tmp"), 0o755))
	}
	sweepTempDirs(dir)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the folder of a gone node (pid %d) is still there", gone.Process.Pid)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

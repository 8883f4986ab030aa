//go:build linux

package policy

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"go.uber.org/goleak"
)

// Each limit of commands.limits ends the call as limit_exceeded naming it,
// with the output so far, and the next call runs (issue 20, item 4). The
// kernel holds the bounds meanwhile: the namespace's pid_max, RLIMIT_FSIZE,
// the tmpfs's size.
func TestExecLimitsEndTheCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	if !Protection().PIDMax {
		t.Skip("this kernel gives PID namespaces no pid_max of their own (Linux 6.14+)")
	}
	f := newFixture(t)
	const policy = "commands:\n  programs: [sh, bash, dd]\n  limits: {processes: 32, file_size: 1MiB, disk: 4MiB, temp_size: 256KiB, cpu_seconds: 1}\n"
	var st syscall.Statfs_t
	onTmpfs := syscall.Statfs(f.proj, &st) == nil && st.Type == 0x01021994 // TMPFS_MAGIC
	for _, c := range []struct {
		name  string
		argv  []string
		limit string
	}{
		{"fork bomb", []string{"bash", "-c", "echo before; sleep 60 & s=$!; :(){ :|:& }; :; wait $s"}, LimitProcesses},
		{"forty processes", []string{"bash", "-c", "echo before; for i in $(seq 40); do sleep 60 & done; wait"}, LimitProcesses},
		{"a big file", []string{"dd", "if=/dev/zero", "of=big", "bs=64k", "count=100"}, LimitFileSize},
		{"many files", []string{"sh", "-c", "echo before; i=0; while head -c 500000 /dev/zero > f$i; do i=$((i+1)); done"}, LimitDisk},
		{"a full /tmp", []string{"sh", "-c", "echo before; head -c 10000000 /dev/zero > /tmp/big; sleep 60"}, LimitTempSize},
		{"a busy loop", []string{"sh", "-c", "echo before; while :; do :; done"}, LimitCPU},
		// Their CPU time together, not each one's alone.
		{"busy children", []string{"sh", "-c", "echo before; for i in 1 2 3 4; do (while :; do :; done) & done; sleep 60"}, LimitCPU},
	} {
		if c.limit == LimitDisk && onTmpfs {
			t.Logf("%s: skipped, the fixture is on tmpfs, whose writes are memory, not storage", c.name)
			continue
		}
		res, err := execIn(t, context.Background(), f.proj, policy, ExecOptions{}, c.argv...)
		if bus.ErrorType(err) != ReasonLimitExceeded || err == nil || !strings.Contains(err.Error(), "commands.limits."+c.limit) || res == nil || res.Killed != c.limit {
			t.Errorf("%s: got %+v, %v; want limit_exceeded naming %s", c.name, res, err, c.limit)
			continue
		}
		if c.argv[0] != "dd" && !strings.Contains(string(res.Stdout), "before") {
			t.Errorf("%s: the output so far is lost: %q", c.name, res.Stdout)
		}
	}
	if fi, err := os.Stat(filepath.Join(f.proj, "big")); err != nil || fi.Size() != 1<<20 {
		t.Errorf("the big file: %v %v, want exactly the limit, 1 MiB", fi, err)
	}
	// Inside, the kernel's own bounds are the limits.
	res, err := execIn(t, context.Background(), f.proj, policy, ExecOptions{}, "sh", "-c",
		"cat /proc/sys/kernel/pid_max; ulimit -f; df -k /tmp | tail -1")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 3 || lines[0] != strconv.Itoa(reservedPIDs+32+helperThreads) || lines[1] != "2048" || !strings.Contains(lines[2], " 256 ") {
		t.Errorf("pid_max, ulimit -f (512-byte blocks), df /tmp: %q (stderr %q)", lines, res.Stderr)
	}
}

// The limits a project asks for are cut to the node's caps, and a policy
// that leaves them out gets the defaults.
func TestLimitsPolicyAndCaps(t *testing.T) {
	p, err := Load("p", []byte("commands:\n  limits: {processes: 100000, file_size: 2GiB, temp_size: \"64 MiB\", output: 1048576}\n"))
	must(t, err)
	sb := &Sandbox{Root: openRoot(t, t.TempDir()), Policy: p}
	want := DefaultLimits
	want.TempSize, want.Output = 64<<20, 1<<20 // below the caps: kept
	if got := sb.Limits(); got != want {
		t.Errorf("under the default caps: %v, want %v", got, want)
	}
	sb.Host = &Host{MaxLimits: Limits{Processes: 50000, FileSize: 4 << 30}}
	want.Processes, want.FileSize = 50000, 2<<30
	if got := sb.Limits(); got != want {
		t.Errorf("under the operator's caps: %v, want %v", got, want)
	}
	if got := (&Sandbox{Root: sb.Root, Policy: Default()}).Limits(); got != DefaultLimits {
		t.Errorf("no limits in the policy: %v", got)
	}
	for _, bad := range []string{
		"commands:\n  limits: {processes: 2}\n", "commands:\n  limits: {file_size: -1}\n", "commands:\n  limits: {temp_size: 1KiB}\n",
		"commands:\n  limits: {disk: lots}\n", "commands:\n  limits: {cpu: 3}\n",
	} {
		if _, err := Load("p", []byte(bad)); err == nil {
			t.Errorf("%q loads", bad)
		}
	}
	for s, want := range map[string]Size{"1048576": 1 << 20, "1MiB": 1 << 20, "1 MiB": 1 << 20, "2G": 2 << 30, "512KB": 512 << 10} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v", s, got, err)
		}
	}
	if s := Size(3 << 20).String(); s != "3MiB" {
		t.Errorf("3 MiB prints %q", s)
	}
}

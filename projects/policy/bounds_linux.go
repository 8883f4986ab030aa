//go:build linux

package policy

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How the helper bounds a command's resources: kernel limits set before the
// program starts, so they hold at every instant, and a watch
// (watchInterval) that ends the call once one is reached.

// reservedPIDs is the kernel's RESERVED_PIDS: once a PID namespace's pid
// counter has passed it, pids wrap around to it, never below.
const reservedPIDs = 300

// helperThreads is room for the threads the helper itself may still start
// (it is a Go program) beside the command's processes.
const helperThreads = 16

// boundProcesses gives the helper's new PID namespace its own pid_max
// (Linux 6.14+, with CAP_SYS_ADMIN in the namespace's user namespace) and
// moves its pid counter past reservedPIDs, so that the namespace has room
// for exactly n processes and threads (plus helperThreads): pids are then
// taken from [reservedPIDs, pid_max) whatever the command does. It runs
// with the namespace's /proc mounted.
func boundProcesses(n int) error {
	max := reservedPIDs + n + helperThreads
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if cur, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && cur < max {
			max = cur // a child namespace cannot go past its parent's
		}
	}
	if err := os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(max)), 0); err != nil {
		return fmt.Errorf("set the command's pid_max: %w", err)
	}
	if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(reservedPIDs)), 0); err != nil {
		return fmt.Errorf("move the command's pid counter: %w", err)
	}
	return nil
}

// setRlimits sets the limits every process of the command inherits:
// RLIMIT_FSIZE (the writer of a file past FileSize gets SIGXFSZ), no core
// files (a crash, or SIGXFSZ itself, would write one into the project),
// and, when nproc is set, RLIMIT_NPROC: for a node not running as root
// where no pid_max bounds the command.
func setRlimits(l Limits, nproc bool) error {
	set := func(what string, res int, v uint64) error {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("set %s: %w", what, err)
		}
		return nil
	}
	if err := set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
		return err
	}
	if err := set("RLIMIT_CORE", unix.RLIMIT_CORE, 0); err != nil {
		return err
	}
	if nproc {
		// The helper's own threads count too.
		return set("RLIMIT_NPROC", unix.RLIMIT_NPROC, uint64(l.Processes+helperThreads))
	}
	return nil
}

// limitCPU gives the program RLIMIT_CPU (SIGXCPU past seconds) once it
// started: set on the helper, the limit would end the helper too, which
// watches long calls. A process the program forked in the moment before
// is not bound by it alone; the watch counts it with the rest.
func limitCPU(pid, seconds int) {
	lim := unix.Rlimit{Cur: uint64(seconds), Max: uint64(seconds) + 1}
	_ = unix.Prlimit(pid, unix.RLIMIT_CPU, &lim, nil)
}

// nsWatch measures a command in its own PID namespace through the
// namespace's /proc, which shows its processes and no other.
type nsWatch struct {
	limits    Limits
	reapedCPU time.Duration // CPU time of the processes the helper reaped
}

func (w *nsWatch) reaped(ru *syscall.Rusage) {
	w.reapedCPU += time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())
}

// clockTick is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every architecture Linux runs Go on).
const clockTick = 10 * time.Millisecond

func (w *nsWatch) check() (limit, detail string) {
	m := measure()
	if m.tasks > w.limits.Processes {
		return LimitProcesses, fmt.Sprintf("it had %d", m.tasks)
	}
	if total := w.reapedCPU + m.cpu; total > time.Duration(w.limits.CPUSeconds)*time.Second {
		return LimitCPU, fmt.Sprintf("it used %.1f", total.Seconds())
	}
	if m.written > int64(w.limits.Disk) {
		return LimitDisk, fmt.Sprintf("it wrote %s", Size(m.written))
	}
	var st unix.Statfs_t
	if unix.Statfs(commandTemp, &st) == nil && (st.Bfree == 0 || st.Ffree == 0) {
		return LimitTempSize, "its /tmp was full"
	}
	return "", ""
}

// killAll kills every process of the namespace but its init, the helper.
func (w *nsWatch) killAll() { _ = syscall.Kill(-1, syscall.SIGKILL) }

// usage is what a scan of the namespace's /proc measured.
type usage struct {
	tasks   int           // processes and threads, zombies too (each holds a pid), the helper's not counted
	cpu     time.Duration // their CPU time, with that of the children they reaped
	written int64         // bytes they (and the children they reaped, the helper's included) wrote to storage
}

// measure scans the namespace's /proc.
func measure() usage {
	var u usage
	u.written = written("1") // what the helper reaped
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return u
	}
	for _, e := range entries {
		name := e.Name()
		if name == "1" || name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid … : the fields after the command, which
		// may hold anything, ')' included.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 18 {
			continue
		}
		// f[0] is field 3 (state): utime is field 14, stime 15, cutime
		// 16, cstime 17, num_threads 20.
		var ticks int64
		for _, s := range f[11:15] {
			v, _ := strconv.ParseInt(s, 10, 64)
			ticks += v
		}
		u.cpu += time.Duration(ticks) * clockTick
		n, _ := strconv.Atoi(f[17])
		u.tasks += max(n, 1)
		u.written += written(name)
	}
	return u
}

// written reads write_bytes less cancelled_write_bytes of /proc/PID/io.
func written(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/io")
	if err != nil {
		return 0
	}
	var w, c int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "write_bytes":
			w, _ = strconv.ParseInt(v, 10, 64)
		case "cancelled_write_bytes":
			c, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return max(w-c, 0)
}

package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// Limits bound what one run_command call may use. A project's policy sets
// them (commands.limits) at most up to the node's caps (Host.MaxLimits,
// which the node's operator sets); a key left out is DefaultLimits' value.
// Reaching one ends the call as a failed call (type limit_exceeded) naming
// the limit, with the output so far. (A smaller output cap of the tools'
// own, tools.Limits.MaxCommandOutput, is too_large.)
type Limits struct {
	// Processes is how many processes and threads the command may have at
	// once, itself and everything it started. The kernel refuses forks
	// past it (the pid_max of the command's PID namespace, Linux 6.14+;
	// else, for a node not running as root, RLIMIT_NPROC in the command's
	// user namespace) and the call ends when it is passed.
	Processes int `json:"processes"`
	// FileSize is the largest file any of its processes may write, in
	// bytes (RLIMIT_FSIZE: the writer gets SIGXFSZ at once). It bounds
	// each file; Disk bounds their sum.
	FileSize Size `json:"file_size"`
	// Disk is how many bytes all its processes together may write to
	// files outside its temp dir: its project, the build caches in it.
	// It is the kernel's count of the data they gave to storage-backed
	// files (write_bytes less cancelled_write_bytes in /proc/PID/io, a
	// process's reaped children included), measured every
	// watchInterval, so a fast writer may pass it by what it writes in
	// that time. A root on tmpfs is not counted (it is memory, bounded by
	// the tmpfs's own size).
	Disk Size `json:"disk"`
	// TempSize is the size of its private temp dir (TMPDIR=/tmp, a tmpfs
	// in memory), in bytes.
	TempSize Size `json:"temp_size"`
	// CPUSeconds is the CPU time all its processes may use together.
	CPUSeconds int `json:"cpu_seconds"`
	// Output is how many bytes of stdout and stderr together are kept;
	// past it the command is killed (limit_exceeded).
	Output Size `json:"output"`
}

// DefaultLimits are the limits of a policy that sets none, and the node's
// caps unless its operator raises them. They let a build or a test suite
// of a large project run; they stop a runaway one long before the node's
// machine suffers.
var DefaultLimits = Limits{
	Processes:  2048,
	FileSize:   1 << 30,
	Disk:       8 << 30,
	TempSize:   1 << 30,
	CPUSeconds: 3600,
	Output:     8 << 20,
}

// The smallest limits that still let a shell start: below them every
// command would fail in a way that names no limit.
var minLimits = Limits{Processes: 8, FileSize: 1 << 10, Disk: 1 << 10, TempSize: 64 << 10, CPUSeconds: 1, Output: 1 << 10}

// Limit names, as in the policy and in a limit_exceeded error.
const (
	LimitProcesses = "processes"
	LimitFileSize  = "file_size"
	LimitDisk      = "disk"
	LimitTempSize  = "temp_size"
	LimitCPU       = "cpu_seconds"
	LimitOutput    = "output"
)

// withDefaults fills the zero fields of l from d.
func (l Limits) withDefaults(d Limits) Limits {
	if l.Processes == 0 {
		l.Processes = d.Processes
	}
	if l.FileSize == 0 {
		l.FileSize = d.FileSize
	}
	if l.Disk == 0 {
		l.Disk = d.Disk
	}
	if l.TempSize == 0 {
		l.TempSize = d.TempSize
	}
	if l.CPUSeconds == 0 {
		l.CPUSeconds = d.CPUSeconds
	}
	if l.Output == 0 {
		l.Output = d.Output
	}
	return l
}

// Within returns l with every field at most max's: what a project asks for
// is cut to what the node's operator allows (project get shows the
// result, so the cut is never silent).
func (l Limits) Within(max Limits) Limits {
	l.Processes = min(l.Processes, max.Processes)
	l.FileSize = min(l.FileSize, max.FileSize)
	l.Disk = min(l.Disk, max.Disk)
	l.TempSize = min(l.TempSize, max.TempSize)
	l.CPUSeconds = min(l.CPUSeconds, max.CPUSeconds)
	l.Output = min(l.Output, max.Output)
	return l
}

// Validate refuses a limit that is negative or below what a shell needs;
// where names the setting ("commands.limits", "sandbox.limits"). Zero
// fields are left to the defaults.
func (l Limits) Validate(where string) error {
	for _, c := range []struct {
		name     string
		v, least int64
		unit     string
	}{
		{LimitProcesses, int64(l.Processes), int64(minLimits.Processes), ""},
		{LimitFileSize, int64(l.FileSize), int64(minLimits.FileSize), " bytes"},
		{LimitDisk, int64(l.Disk), int64(minLimits.Disk), " bytes"},
		{LimitTempSize, int64(l.TempSize), int64(minLimits.TempSize), " bytes"},
		{LimitCPU, int64(l.CPUSeconds), int64(minLimits.CPUSeconds), ""},
		{LimitOutput, int64(l.Output), int64(minLimits.Output), " bytes"},
	} {
		if c.v < 0 || c.v != 0 && c.v < c.least {
			return bus.Errorf(bus.ReasonInvalidRequest, "%s.%s is %d; give at least %d%s (or leave it out for the default)", where, c.name, c.v, c.least, c.unit)
		}
	}
	return nil
}

func (l Limits) String() string {
	return fmt.Sprintf("processes %d, file_size %s, disk %s, temp_size %s, cpu_seconds %d, output %s",
		l.Processes, l.FileSize, l.Disk, l.TempSize, l.CPUSeconds, l.Output)
}

// Size is a number of bytes. In a policy it is an integer or a string
// with a binary unit: "512KiB", "64MiB", "2GiB" (KB, MB, GB are read as
// the same powers of 1024, which is what people mean by them here).
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// ParseSize reads "1048576", "1MiB", "1 MiB" or "1M".
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: give bytes or a number with KiB, MiB or GiB, e.g. \"64MiB\"", s)
	}
	return Size(n * mult), nil
}

// UnmarshalYAML reads an integer (bytes) or a string with a unit; policies
// given as JSON are read through the same loader.
func (s *Size) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	switch x := v.(type) {
	case uint64:
		if x > 1<<62 {
			return fmt.Errorf("%d bytes is too large a size", x)
		}
		*s = Size(x)
	case int64:
		if x < 0 {
			return fmt.Errorf("%d is not a size: sizes are not negative", x)
		}
		*s = Size(x)
	case float64:
		if x < 0 || x != float64(int64(x)) {
			return fmt.Errorf("%v is not a size: give whole bytes or a number with KiB, MiB or GiB", x)
		}
		*s = Size(x)
	case string:
		n, err := ParseSize(x)
		if err != nil {
			return err
		}
		*s = n
	default:
		return fmt.Errorf("%v is not a size: give bytes or a number with KiB, MiB or GiB, e.g. \"64MiB\"", v)
	}
	return nil
}

// String prints s in the largest binary unit that divides it.
func (s Size) String() string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(s) >= u.mult && int64(s)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(s)/u.mult, u.suffix)
		}
	}
	return fmt.Sprintf("%d bytes", int64(s))
}

//go:build unix && !linux

package policy

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Outside Linux there are no namespaces, no Landlock and no per-namespace
// pid_max: Protection reports none, so admit refuses every command unless
// the node's operator and the project's policy accept running it
// unconfined, and Exec never asks the helper for namespaces.

func namespaceAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func plainAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func programAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

var errNoNamespaces = errors.New("namespaces are Linux only")

func buildView(*CommandSpec) error { return errNoNamespaces }

func boundProcesses(int) error { return errNoNamespaces }

func dropCapabilities() error { return errNoNamespaces }

func dieWithParent(int) error { return nil }

// setRlimits sets what every process of the command inherits: RLIMIT_FSIZE,
// no core files, and RLIMIT_NPROC when nproc.
func setRlimits(l Limits, nproc bool) error {
	set := func(res int, v uint64) error { return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}) }
	if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_CORE, 0); err != nil {
		return err
	}
	if nproc {
		return set(unix.RLIMIT_NPROC, uint64(l.Processes+helperThreads))
	}
	return nil
}

// limitCPU is a no-op: there is no prlimit to set it on the program alone.
func limitCPU(int, int) {}

// helperThreads is room for the helper's own threads in RLIMIT_NPROC.
const helperThreads = 16

// nsWatch is never used outside Linux (no PID namespaces).
type nsWatch struct{ limits Limits }

func (w *nsWatch) reaped(*syscall.Rusage)        {}
func (w *nsWatch) check() (limit, detail string) { return "", "" }
func (w *nsWatch) killAll()                      {}

//go:build unix

package policy

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// closeOnExecUpTo marks the descriptors above the status pipe, up to the
// process's limit (at most max), close-on-exec one by one.
func closeOnExecUpTo(max int) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(max) {
		max = int(lim.Cur)
	}
	for fd := helperStatusFD + 1; fd < max; fd++ {
		syscall.CloseOnExec(fd) // a descriptor that is not open: nothing to do
	}
}

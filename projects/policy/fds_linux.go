//go:build linux

package policy

import (
	"golang.org/x/sys/unix"
)

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC (linux/close_range.h).
const closeRangeCloexec = 1 << 2

// closeInheritedOnExec marks every file descriptor above the status pipe
// close-on-exec, so the program gets stdin, stdout and stderr and nothing
// else: the node may have inherited descriptors without the flag from
// whatever started it (a supervisor's pipe, a socket), and they would
// otherwise reach every command through the helper. Go's own descriptors
// carry the flag already.
func closeInheritedOnExec() {
	if unix.CloseRange(helperStatusFD+1, ^uint(0), closeRangeCloexec) == nil {
		return // Linux 5.11+
	}
	closeOnExecUpTo(1 << 16)
}

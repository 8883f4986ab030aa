//go:build unix && !linux

package policy

// closeInheritedOnExec marks every file descriptor above the status pipe
// close-on-exec (see the Linux version).
func closeInheritedOnExec() { closeOnExecUpTo(1 << 16) }

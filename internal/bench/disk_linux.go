package bench

import "syscall"

// Filesystem magic numbers of statfs(2) for filesystems held in memory.
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// statfsType names the in-memory filesystem path is on ("tmpfs",
// "ramfs"), or "" for any other; ok is false when statfs fails.
func statfsType(path string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return "", false
	}
	switch uint32(st.Type) {
	case tmpfsMagic:
		return "tmpfs", true
	case ramfsMagic:
		return "ramfs", true
	}
	return "", true
}

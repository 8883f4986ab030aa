//go:build unix

package policy

import (
	"io/fs"
	"syscall"
)

// nlink is the number of hard links of the file fi describes.
func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

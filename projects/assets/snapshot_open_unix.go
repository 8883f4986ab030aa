//go:build unix

package assets

import (
	"os"
	"syscall"
)

// openFlags opens without blocking: a FIFO planted where an asset should
// be would otherwise hang the loader in open(2) until a writer appears.
// The opened file is checked to be regular before it is read.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

//go:build !unix

package assets

import "os"

// openFlags: see snapshot_open_unix.go; elsewhere there are no FIFOs to
// guard against.
const openFlags = os.O_RDONLY

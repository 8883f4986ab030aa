//go:build unix

package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Each command gets a folder of its own on the host (where its view is
// built, or its TMPDIR without namespaces), removed when it ends. A node
// killed with commands running (kill -9) cannot remove theirs; the folders
// carry the node's pid, so the next node to run a command removes those of
// nodes that are gone (their commands died with them).

const tempPrefix = "jido-cmd-"

// commandTempDir creates a command's folder on the host.
func commandTempDir() (string, error) {
	sweepOnce()
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
}

var sweepOnce = sync.OnceFunc(func() { sweepTempDirs(os.TempDir()) })

// sweepTempDirs removes the command folders in dir left by nodes that are
// no longer running.
func sweepTempDirs(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*-*"))
	for _, p := range paths {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(p), tempPrefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(p)
		}
	}
}

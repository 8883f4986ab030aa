package jstest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main is a TestMain for a package whose tests share one cluster of n
// servers: it starts the cluster in temporary directories, sets *c, runs
// the tests, shuts the cluster down, removes the directories, and checks
// that no goroutine leaked. It returns the exit code for os.Exit.
func Main(m *testing.M, n int, c **Cluster) int {
	var dirs []string
	defer func() {
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}()
	tempDir := func() string {
		d, err := os.MkdirTemp("", "jstest-")
		if err != nil {
			panic(err)
		}
		dirs = append(dirs, d)
		return d
	}
	started, err := Start(n, tempDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*c = started
	code := m.Run()
	started.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

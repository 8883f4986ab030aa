package e2e

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// tools is built once for every test in the package.
var tools Tools

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jido-bus-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tools, err = Build(dir)
	if err == nil {
		err = Isolate(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

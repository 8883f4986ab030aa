package cluster

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
)

// cluster is the 3-server cluster every test shares; each test joins
// members under a prefix of its own, so no two tests see each other's
// bucket.
var cluster *jstest.Cluster

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var dirs []string
	defer func() {
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}()
	tempDir := func() string {
		d, err := os.MkdirTemp("", "cluster-test-")
		if err != nil {
			panic(err)
		}
		dirs = append(dirs, d)
		return d
	}
	c, err := jstest.Start(3, tempDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster = c
	code := m.Run()
	c.Shutdown()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

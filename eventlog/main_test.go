package eventlog

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The kill -9 test re-executes this binary as the appending child.
	if dir := os.Getenv(killChildEnv); dir != "" {
		os.Exit(runKillChild(dir))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { removeFixtures() }))
}

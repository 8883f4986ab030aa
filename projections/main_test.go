package projections

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The kill test re-executes this binary as the folding child.
	if dir := os.Getenv(killChildEnv); dir != "" {
		os.Exit(runKillChild(dir))
	}
	goleak.VerifyTestMain(m)
}

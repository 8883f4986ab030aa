package projects_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestMain lets the test binary stand in for jido-bus: policy.Exec
// re-executes the running binary with policy.HelperArg (the MCP servers'
// tests start sandboxed commands), and that process must become the
// sandbox-exec helper, as cmd/jido-bus does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == policy.HelperArg {
		os.Exit(policy.HelperMain())
	}
	goleak.VerifyTestMain(m)
}

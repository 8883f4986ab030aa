package llm

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no stream, timer or connection goroutine outlives
// its Complete call.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

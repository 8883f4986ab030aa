//go:build linux

package policy

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestExecOutputLimitOfThePolicy: a command that prints past its
// policy's commands.limits.output ends as every other limit does —
// limit_exceeded naming the limit, with the output so far — as the docs
// and run_command's description say; it was too_large without the
// setting's name, so nobody learnt what to raise. (A smaller cap the
// caller sets, ExecOptions.MaxOutput, stays too_large: TestExecOutputCap.)
func TestExecOutputLimitOfThePolicy(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t)
	const limit = 4 << 10
	res, err := execIn(t, context.Background(), f.proj, shPolicy+"  without_landlock: warn\n  limits: {output: 4KiB}\n", ExecOptions{},
		"head", "-c", "104857600", "/dev/zero")
	if err == nil || res == nil {
		t.Fatalf("got %+v, %v; want the command ended at its output limit", res, err)
	}
	wantType(t, err, ReasonLimitExceeded)
	if !strings.Contains(err.Error(), "commands.limits.output") {
		t.Errorf("the error %q does not name commands.limits.output", err)
	}
	if n := len(res.Stdout) + len(res.Stderr); n != limit {
		t.Errorf("kept %d bytes of output, want the %d so far", n, limit)
	}
}

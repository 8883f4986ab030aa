//go:build linux

package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// Where the node's operator and the project's policy accept weaker
// confinement and the system gives no namespaces, a command runs under
// Landlock and its limits alone: it still reads only the allow-list and
// writes only its root and temp dir, every result says what is missing,
// and what it leaves in its process group is killed when it ends.
func TestExecWithoutNamespaces(t *testing.T) {
	defer goleak.VerifyNone(t)
	needLandlock(t, func(c Confinement) bool { return c.TCP })
	f := newFixture(t)
	p, err := Load("p", []byte(shPolicy+"  without_namespaces: warn\n"))
	must(t, err)
	noNS := Protection()
	noNS.Namespaces = false
	for _, allow := range []bool{false, true} {
		sb := &Sandbox{Root: openRoot(t, f.proj), Policy: p, Host: &Host{AllowWeaker: allow}}
		arg, running := tagged(t, 10)
		spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"sh", "-c",
			"cat ok.txt; cat " + f.outside + "/secret; echo made > made.txt; echo t > \"$TMPDIR/t\" && echo tmp-ok; " +
				"echo x > " + f.outside + "/new; sleep " + arg + " & echo left"}}, []string{"PATH=/usr/bin:/bin"})
		must(t, err)
		res, err := Exec(context.Background(), spec, ExecOptions{Confinement: &noNS})
		if !allow {
			wantType(t, err, ReasonDenied)
			if err != nil && !strings.Contains(err.Error(), "--sandbox-allow-weaker") {
				t.Errorf("the refusal %q does not say how the operator allows it", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out := string(res.Stdout)
		if !strings.Contains(out, "ok") || !strings.Contains(out, "tmp-ok") || !strings.Contains(out, "left") || strings.Contains(out, "SECRET") {
			t.Errorf("stdout %q stderr %q", out, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(f.outside, "new")); err == nil {
			t.Errorf("the command wrote outside its root")
		}
		if b, _ := os.ReadFile(filepath.Join(f.proj, "made.txt")); string(b) != "made\n" {
			t.Errorf("made.txt: %q", b)
		}
		if !strings.Contains(res.Warning, "weaker confinement") || !strings.Contains(res.Warning, "namespaces of its own") {
			t.Errorf("the warning %q does not say what is missing", res.Warning)
		}
		waitGoneTagged(t, running)
	}
}

// waitGoneTagged waits for the processes running reports to be gone:
// without a PID namespace the kill of the process group is sent as the
// call returns, and a process may take a moment to end.
func waitGoneTagged(t *testing.T, running func() []int) {
	t.Helper()
	testkit.EventuallyNil(t, "the command's processes to end with it", func() error {
		if pids := running(); len(pids) > 0 {
			return fmt.Errorf("processes %v still run", pids)
		}
		return nil
	})
}

//go:build linux

package policy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// The working directory changes between the check and the start of the
// command: each change is refused with the type that says what happened,
// never internal.
func TestExecWorkingDirectoryRace(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	sub := filepath.Join(f.proj, "sub")
	sb := openSandbox(t, f.proj, shPolicy)
	for _, c := range []struct {
		name   string
		change func()
		want   string
	}{
		{"removed", func() { must(t, os.RemoveAll(sub)) }, "not_found"},
		{"a link out of the root", func() { must(t, os.RemoveAll(sub)); must(t, os.Symlink(f.outside, sub)) }, ReasonOutsideRoot},
		{"a link inside the root", func() { must(t, os.RemoveAll(sub)); must(t, os.Symlink("docs", sub)) }, ReasonOutsideRoot},
		{"a file", func() { must(t, os.RemoveAll(sub)); must(t, os.WriteFile(sub, nil, 0o644)) }, "invalid_request"},
	} {
		must(t, os.RemoveAll(sub))
		must(t, os.Mkdir(sub, 0o755))
		spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"sh", "-c", "pwd"}, Dir: "sub"}, []string{"PATH=/usr/bin:/bin"})
		must(t, err)
		c.change()
		res, err := Exec(context.Background(), spec, ExecOptions{})
		if err == nil {
			t.Errorf("%s: the command ran: %s", c.name, res.Stdout)
			continue
		}
		wantType(t, err, c.want)
	}
}

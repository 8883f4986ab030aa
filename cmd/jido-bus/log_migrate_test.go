package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogMigrateRefusals: what an operator gets wrong is refused with
// what to give instead, and nothing is created.
func TestLogMigrateRefusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", dir}, "give --to-layout: 1 for the builds of log format 1"},
		{[]string{"--to-layout", "3", "--data-dir", dir}, "key layout 3: this build writes layouts 1"},
		{[]string{"--to-layout", "1", "--data-dir", dir}, "no event log in " + dir},
	} {
		out, err := runRoot(t, append([]string{"log", "migrate"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("log migrate %v: %v\n%s; want an error saying %q", c.args, err, out, c.want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a data dir that was never there was made: %v", err)
	}
}

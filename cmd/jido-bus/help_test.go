package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpTellsTheTruth: what --help says of defaults is what the
// commands do. Only the verbs that write a data dir say it is created
// if missing (every read-only verb said so, and a missing one is an
// error there); mcp names no default server (it starts its own node
// unless one is named); serve's --user names JIDO_USER, which sets it.
func TestHelpTellsTheTruth(t *testing.T) {
	creates := map[string]bool{"jido-bus serve": true, "jido-bus log import": true, "jido-bus mcp": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("data-dir"); f != nil {
			says := strings.Contains(f.Usage, "created if missing")
			if says != creates[c.CommandPath()] {
				t.Errorf("%s --data-dir: %q", c.CommandPath(), f.Usage)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())

	out, err := runRoot(t, "mcp", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "127.0.0.1:4222") || strings.Contains(out, "default nats://") {
		t.Errorf("mcp --help names a default server mcp does not use:\n%s", out)
	}
	out, err = runRoot(t, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--user ") && !strings.Contains(line, "JIDO_USER") {
			t.Errorf("serve --help's --user does not name JIDO_USER: %s", line)
		}
	}
}

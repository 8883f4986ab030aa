package main

import (
	"strings"
	"testing"
)

// TestBenchScenarioArguments: `jido-bus bench cluster` names its scenarios
// as arguments, as --scenarios does; both at once, or a name no scenario
// has, is refused before anything runs.
func TestBenchScenarioArguments(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "--scenarios", "cast"}, "either as arguments or with --scenarios"},
		{[]string{"warp"}, `unknown scenario "warp"; choose among cast, call, fanout, replay, jetstream, cluster`},
		{[]string{"--kills", "0"}, "--kills 0: want 1 or more"},
		{[]string{"cluster", "--lease-timeout", "100ms"}, "--lease-timeout 100ms: want at least 500ms"},
	}
	for _, c := range cases {
		args := append([]string{"bench", "--data-dir", t.TempDir()}, c.args...)
		out, err := runRoot(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench %v: %v, want an error saying %q\n%s", c.args, err, c.want, out)
		}
	}
}

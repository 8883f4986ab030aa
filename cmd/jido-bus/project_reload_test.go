package main

import (
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// TestPrintReloadSaysWhatThePolicyDid: project reload prints what changed
// in the assets and in the policy: the settings a followed edit changed,
// why a file was not taken (and that the policy in force stays), why the
// file is not read at all.
func TestPrintReloadSaysWhatThePolicyDid(t *testing.T) {
	p := projects.ProjectInfo{ID: "web", Version: 3}
	for _, c := range []struct {
		reply projectapi.ReloadReply
		want  []string
	}{
		{projectapi.ReloadReply{Project: p, Policy: projects.PolicyReload{Source: ".jido/policy.yaml", Changed: true, Changes: []string{"tools.run_command: (none) -> ask"}}},
			[]string{"project web: assets unchanged (version 3)", "policy: changed, now .jido/policy.yaml", "  ~ tools.run_command: (none) -> ask"}},
		{projectapi.ReloadReply{Project: p, Policy: projects.PolicyReload{Source: "default", Refused: ".jido/policy.yaml: [1:8] sequence end token ']' not found"}},
			[]string{"project web: nothing changed (version 3)", "policy: the file was not taken; the policy in force (default) stays: .jido/policy.yaml: [1:8]"}},
		{projectapi.ReloadReply{Project: p, Policy: projects.PolicyReload{Source: "request", Ignored: "the project was opened with a policy in its request"}},
			[]string{"policy: request: the project was opened with a policy in its request"}},
		{projectapi.ReloadReply{Project: p, Policy: projects.PolicyReload{Source: "default"}},
			[]string{"project web: nothing changed (version 3)\n"}},
	} {
		var b strings.Builder
		printReload(&b, c.reply)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("reload output does not say %q:\n%s", w, b.String())
			}
		}
		if pol := c.reply.Policy; !pol.Changed && pol.Refused == "" && pol.Ignored == "" && strings.Contains(b.String(), "policy:") {
			t.Errorf("a reload that changed nothing speaks of the policy:\n%s", b.String())
		}
	}
}

package projects

import (
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestCommandsMayWriteRefusesTheirOwnEdits: where a project's commands can
// write .jido (no user namespaces on this node, and the policy in force
// lets run_command run without them, as the operator allows), an edit of
// the policy file may be a command's, and following it would let the
// commands loosen their own policy: it is refused. Anywhere else the file
// is followed. Each case is one change from the dangerous setting.
func TestCommandsMayWriteRefusesTheirOwnEdits(t *testing.T) {
	weak := func() (policy.Confinement, *policy.Sandbox) {
		p, err := policy.Load("policy.yaml", []byte("commands:\n  programs: [sh]\n  without_namespaces: warn\n"))
		if err != nil {
			t.Fatal(err)
		}
		return policy.Confinement{ABI: 4, Filesystem: true, TCP: true}, &policy.Sandbox{Policy: p, Host: &policy.Host{AllowWeaker: true}}
	}
	c, box := weak()
	if err := commandsMayWrite(c, box, ".jido"); err == nil || !strings.Contains(err.Error(), "close the project and open it again") {
		t.Fatalf("commands that can write .jido: %v, want a refusal saying what to do", err)
	}
	for name, change := range map[string]func(*policy.Confinement, *policy.Sandbox){
		"namespaces":          func(c *policy.Confinement, _ *policy.Sandbox) { c.Namespaces = true },
		"operator strict":     func(_ *policy.Confinement, b *policy.Sandbox) { b.Host = &policy.Host{} },
		"no host":             func(_ *policy.Confinement, b *policy.Sandbox) { b.Host = nil },
		"no programs":         func(_ *policy.Confinement, b *policy.Sandbox) { b.Policy.Commands.Programs = nil },
		"namespaces required": func(_ *policy.Confinement, b *policy.Sandbox) { b.Policy.Commands.WithoutNamespaces = "refuse" },
		"run_command denied":  func(_ *policy.Confinement, b *policy.Sandbox) { b.Policy.Tools["run_command"] = policy.ModeDeny },
	} {
		c, box := weak()
		change(&c, box)
		if err := commandsMayWrite(c, box, ".jido"); err != nil {
			t.Errorf("%s: the file is refused although commands cannot write it: %v", name, err)
		}
	}
}

// TestPolicyChanges: a change of policy is listed a line per setting,
// sorted, lists and values as JSON, "(none)" for a setting one side lacks.
func TestPolicyChanges(t *testing.T) {
	got, err := policyChanges(
		[]byte(`{"tools":{"*":"allow","write_file":"deny"},"paths":{"deny":["**/.env"]},"commands":{"network":false,"limits":{}}}`),
		[]byte(`{"tools":{"*":"allow","run_command":"ask"},"paths":{"deny":[]},"commands":{"network":true,"limits":{"processes":64}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"commands.limits.processes: (none) -> 64",
		"commands.network: false -> true",
		`paths.deny: ["**/.env"] -> []`,
		"tools.run_command: (none) -> ask",
		"tools.write_file: deny -> (none)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if same, _ := policyChanges([]byte(`{"tools":{"a":"allow","*":"deny"}}`), []byte(`{"tools": {"*": "deny", "a": "allow"}}`)); len(same) != 0 {
		t.Fatalf("the same policy written another way differs: %v", same)
	}
}

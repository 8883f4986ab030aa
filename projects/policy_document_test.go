package projects

import (
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestPolicyDocumentKeepsUnsetEnv: a policy that sets no commands.env
// (every variable the operator allows, PATH among them, is passed) is
// the same policy once stored and read back, as Restore reads it; one
// that sets env: [] passes nothing, stored or not.
func TestPolicyDocumentKeepsUnsetEnv(t *testing.T) {
	for _, env := range [][]string{nil, {}, {"PATH"}} {
		p := policy.Default()
		p.Commands.Programs = []string{"sh"}
		p.Commands.Env = env
		doc, err := policyDocument(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := policyFromDocument(doc, ".jido")
		if err != nil {
			t.Fatal(err)
		}
		if (back.Commands.Env == nil) != (env == nil) || len(back.Commands.Env) != len(env) {
			t.Errorf("env %#v stored as %s came back as %#v", env, doc, back.Commands.Env)
		}
	}
}

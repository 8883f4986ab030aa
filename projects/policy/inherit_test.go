package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/secrets"
)

// The environment a command gets is the project's choice among what the
// node's operator allows, never one of the node's secrets: a policy that
// lists JIDO_PASSWORD next to printenv once read the admin password.
func TestCommandEnvIsTheOperatorsChoiceNeverASecret(t *testing.T) {
	f := newFixture(t)
	bin := binDir(t, "tool")
	environ := []string{
		"PATH=" + bin, "LANG=C.UTF-8", "TZ=UTC", "GOPATH=/go",
		"JIDO_PASSWORD=admin-s3cret", "JIDO_TOKEN=node-token-value", "OPENAI_API_KEY=sk-provider-key",
		"JIDO_SECRET_HOOK=hook-signing-key", "REPO_URL=https://x:node-token-value@git.example/r",
	}
	set := secrets.New(environ, []string{"JIDO_PASSWORD", "JIDO_TOKEN", "OPENAI_API_KEY"})
	operator := &Inherit{Names: []string{"PATH", "LANG", "GOPATH", "REPO_URL"}, Secret: set.Holds}
	cases := []struct {
		name, policy string
		inherit      *Inherit
		want         []string
	}{
		{"no env in the policy: all the operator allows", "commands: {programs: [tool]}", operator,
			[]string{"PATH=" + bin, "LANG=C.UTF-8", "GOPATH=/go"}},
		{"the policy chooses among them", "commands: {programs: [tool], env: [PATH, GOPATH]}", operator,
			[]string{"PATH=" + bin, "GOPATH=/go"}},
		// A policy stored before the operator narrowed the list, or one
		// that lists what it should not: dropped at the run whatever got
		// it this far.
		{"a stored policy asking for secrets", "commands: {programs: [tool], env: [PATH, JIDO_PASSWORD, JIDO_TOKEN, OPENAI_API_KEY, JIDO_SECRET_HOOK, TZ]}", operator,
			[]string{"PATH=" + bin}},
		{"a variable holding a secret under another name", "commands: {programs: [tool], env: [PATH, REPO_URL]}", operator,
			[]string{"PATH=" + bin}},
		{"no operator rule: the defaults", "commands: {programs: [tool], env: [PATH, TZ, JIDO_PASSWORD]}", nil,
			[]string{"PATH=" + bin, "TZ=UTC"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := openSandbox(t, f.proj, c.policy)
			sb.Policy = sb.Policy.WithInherit(c.inherit)
			spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"tool"}}, environ)
			if err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(c.want), "HOME="+f.proj)
			if !slices.Equal(spec.Env, want) {
				t.Fatalf("env %q, want %q", spec.Env, want)
			}
			// Approving keeps the rule: a tool a person approved runs with
			// the same environment.
			approved := &Sandbox{Root: sb.Root, Policy: sb.Policy.Approving("run_command")}
			spec, err = approved.Command("run_command", CommandRequest{Argv: []string{"tool"}}, environ)
			if err != nil || !slices.Equal(spec.Env, want) {
				t.Fatalf("approved: env %q, %v; want %q", spec.Env, err, want)
			}
		})
	}
}

// A project asking for a variable the operator does not allow, or for a
// secret, is refused at open with a message naming the serve setting.
func TestInheritCheckNamesTheServeSetting(t *testing.T) {
	t.Setenv("JIDO_E2E_URL_WITH_TOKEN", "https://u:node-token-value@h/")
	set := secrets.New([]string{"JIDO_TOKEN=node-token-value"}, []string{"JIDO_PASSWORD", "JIDO_TOKEN"})
	operator := &Inherit{Names: []string{"PATH", "JIDO_E2E_URL_WITH_TOKEN"}, Secret: set.Holds}
	cases := []struct {
		env  string
		want string // "" accepted
	}{
		{"", ""},
		{"env: [PATH]", ""},
		{"env: []", ""},
		{"env: [PATH, OPENAI_API_KEY]", "serve --command-env"},
		{"env: [JIDO_PASSWORD]", "this node's secrets"},
		{"env: [JIDO_E2E_URL_WITH_TOKEN]", "this node's secrets"},
	}
	for _, c := range cases {
		p := load(t, "commands: {"+c.env+"}")
		err := operator.Check(p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.env, err)
		case c.want != "" && (bus.ErrorType(err) != bus.ReasonForbidden || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want forbidden saying %q", c.env, err, c.want)
		}
	}
	// An empty list is none, not the operator's.
	sb := openSandbox(t, t.TempDir(), "commands: {programs: [/bin/true], env: []}")
	sb.Policy = sb.Policy.WithInherit(operator)
	spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"/bin/true"}}, []string{"PATH=/bin"})
	if err != nil || len(spec.Env) != 1 || !strings.HasPrefix(spec.Env[0], "HOME=") {
		t.Fatalf("env: []: %q, %v; want HOME only", spec.Env, err)
	}
	// Without an operator rule the defaults are what may be listed.
	if err := (*Inherit)(nil).Check(load(t, "commands: {env: [PATH, LANG, LC_ALL, TERM, TZ]}")); err != nil {
		t.Fatalf("the default list refused without an operator rule: %v", err)
	}
	if err := (*Inherit)(nil).Check(load(t, "commands: {env: [OPENAI_API_KEY]}")); err == nil {
		t.Fatal("a variable outside the defaults accepted without an operator rule")
	}
}

func TestCommandEnvNeverTakesHomeOrTmpdir(t *testing.T) {
	for _, name := range []string{"HOME", "TMPDIR"} {
		if _, err := Load("policy", []byte("commands: {env: ["+name+"]}")); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("commands.env [%s]: %v, want refused naming it", name, err)
		}
	}
}

package projects_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/secrets"
)

// A project's policy chooses what its commands inherit among what the
// node's operator allows: a policy (inline or the project's own file)
// asking for more is refused at open, naming the serve setting.
func TestOpenRefusesACommandEnvTheOperatorDoesNotAllow(t *testing.T) {
	t.Setenv("JIDO_PASSWORD", "admin-pw-for-the-test")
	set := secrets.New([]string{"JIDO_PASSWORD=admin-pw-for-the-test"}, []string{"JIDO_PASSWORD"})
	operator := &policy.Inherit{Names: []string{"PATH", "GOPATH"}, Secret: set.Holds}
	n, err := node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NoSync: true, NATS: node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) { c.NoWatch = true; c.CommandEnv = operator },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	cases := []struct {
		name   string
		policy string // inline; "" the project's file below
		file   string
		want   string // "" opened
	}{
		{"default", "", "", ""},
		{"among the operator's", `{"commands":{"env":["GOPATH"]}}`, "", ""},
		{"inline, a key", `{"commands":{"env":["PATH","OPENAI_API_KEY"]}}`, "", "serve --command-env"},
		{"inline, the admin password", `{"commands":{"env":["JIDO_PASSWORD"]}}`, "", "this node's secrets"},
		{"the project's file", "", "commands:\n  env: [PATH, LANG]\n", "LANG, which this node does not let commands inherit"},
	}
	for i, c := range cases {
		dir := t.TempDir()
		if c.file != "" {
			writeFiles(t, dir, map[string]string{".jido/policy.yaml": c.file})
		}
		id := "p" + string(rune('a'+i))
		var pol []byte
		if c.policy != "" {
			pol = []byte(c.policy)
		}
		_, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: id, Policy: pol})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (bus.ErrorType(err) != bus.ReasonForbidden || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want forbidden saying %q", c.name, err, c.want)
		}
		if c.want != "" {
			if _, err := e.Get(id); err == nil {
				t.Errorf("%s: the refused project is open", c.name)
			}
		}
	}
}

// A project names one of the node's providers; base_url and api_key_env
// in its config are refused, naming the operator's setting (they sent
// JIDO_PASSWORD as a bearer token to the project's own listener).
func TestProjectConfigMayNotNameAnEndpointOrAKey(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	for i, cfg := range []string{
		"llm:\n  provider: openai\n  model: x\n  api_key_env: JIDO_PASSWORD\n  base_url: http://127.0.0.1:9/v1\n",
		"llm:\n  provider: openai\n  model: x\n  base_url: http://127.0.0.1:9/v1\n",
		"llm: {provider: openai, model: x, api_key_env: OPENAI_API_KEY}\n",
	} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{".jido/config.yaml": cfg})
		id := "c" + string(rune('a'+i))
		if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: id}); err != nil {
			t.Fatal(err)
		}
		_, _, err := n.Projects().Settings(id)
		if err == nil || !strings.Contains(err.Error(), "serve --provider") || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%q: %v, want refused naming serve --provider", cfg, err)
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".jido/config.yaml": "llm: {provider: local, model: llama3}\n"})
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "ok"}); err != nil {
		t.Fatal(err)
	}
	if s, _, err := n.Projects().Settings("ok"); err != nil || s.LLM.Provider != "local" {
		t.Fatalf("a provider by name: %+v %v", s, err)
	}
}

// The operator narrowing what commands inherit does not keep a project
// from coming back after a restart: it reopens, and its commands go
// without what it may no longer have.
func TestRestartWithANarrowerCommandEnv(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	start := func(names ...string) *node.Node {
		n, err := node.Start(context.Background(), node.Config{
			DataDir: data, NoSync: true, NATS: node.NATSConfig{DontListen: true},
			Projects: func(c *projects.Config) { c.NoWatch = true; c.CommandEnv = &policy.Inherit{Names: names} },
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := start("PATH", "GOPATH")
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1", Policy: []byte(`{"commands":{"env":["PATH","GOPATH"]}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	n = start("PATH")
	defer closeNode(t, n)
	info, err := n.Projects().Get("p1")
	if err != nil || info.Status != projects.StatusOpen {
		t.Fatalf("after the restart: %+v %v", info, err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if info.Root != real {
		t.Fatalf("root %s", info.Root)
	}
}

package projects_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// The operator's sandbox rules reach each project's commands, and get
// says what confines them: what they read (the node-wide and the
// project's own paths), how many paths are hidden from them (the node's
// data dir, its config, every other project), their limits cut to the
// node's caps. The limits a policy sets survive a restart.
func TestSandboxRulesReachTheProjects(t *testing.T) {
	data := t.TempDir()
	a, b := projectDir(t), projectDir(t)
	realA, _ := filepath.EvalSymlinks(a)
	start := func() *node.Node {
		n, err := node.Start(context.Background(), node.Config{
			DataDir: data, NoSync: true,
			NATS: node.NATSConfig{DontListen: true},
			Sandbox: projects.SandboxConfig{
				Read:        []string{"/opt/everyone"},
				ProjectRead: map[string][]string{a: {"/opt/only-a"}},
				Hide:        []string{"/etc/jido-bus/jido.yaml"},
				MaxLimits:   policy.Limits{Processes: 500},
			},
			Projects: func(c *projects.Config) { c.NoWatch = true },
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := start()
	ctx := context.Background()
	pol := json.RawMessage(`{"commands":{"programs":["sh"],"limits":{"processes":100000,"file_size":"2MiB"}}}`)
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: a, ID: "a", Policy: pol}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: b, ID: "b"}); err != nil {
		t.Fatal(err)
	}
	check := func(n *node.Node) {
		t.Helper()
		got, err := n.Projects().Get("a")
		if err != nil {
			t.Fatal(err)
		}
		r := got.Sandbox
		if r == nil || got.Root != realA {
			t.Fatalf("get a: %+v", got)
		}
		if !slices.Contains(r.Reads, "/opt/everyone") || !slices.Contains(r.Reads, "/opt/only-a") {
			t.Errorf("a's reads %v lack the operator's paths", r.Reads)
		}
		// The data dir, the config file and b's root.
		if r.Hidden != 3 {
			t.Errorf("a hides %d paths, want 3", r.Hidden)
		}
		if r.Limits.Processes != 500 || r.Limits.FileSize != 2<<20 || r.Limits.Output != policy.DefaultLimits.Output {
			t.Errorf("a's limits %v: want processes cut to the node's cap, file_size the policy's, the rest the defaults", r.Limits)
		}
		if r.RunCommand == "" || r.Confinement == "" {
			t.Errorf("a's report says nothing: %+v", r)
		}
		gb, _ := n.Projects().Get("b")
		if gb.Sandbox == nil || slices.Contains(gb.Sandbox.Reads, "/opt/only-a") || gb.Sandbox.RunCommand != "not offered" {
			t.Errorf("b's report: %+v", gb.Sandbox)
		}
	}
	check(n)
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	n = start()
	defer closeNode(t, n)
	check(n)
}

func TestSandboxConfigRefusals(t *testing.T) {
	for _, c := range []struct {
		cfg  projects.SandboxConfig
		want string
	}{
		{projects.SandboxConfig{Read: []string{"/"}}, "sandbox.read"},
		{projects.SandboxConfig{Read: []string{"opt"}}, "sandbox.read"},
		{projects.SandboxConfig{ProjectRead: map[string][]string{"rel": {"/x"}}}, "sandbox.projects"},
		{projects.SandboxConfig{MaxLimits: policy.Limits{Processes: 1}}, "sandbox.limits.processes"},
	} {
		_, err := node.Start(context.Background(), node.Config{
			DataDir: t.TempDir(), NoSync: true, NATS: node.NATSConfig{DontListen: true}, Sandbox: c.cfg,
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/projects"
)

// TestProjectInitStarterLoads: project init writes a .jido/ that a node
// opens as written — the config names a provider and a model, the
// policy is the project's, one skill and one command load, nothing is
// diagnosed — says what to run next, and keeps what is already there.
func TestProjectInitStarterLoads(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := filepath.Join(t.TempDir(), "my app")
	out, err := runRoot(t, "project", "init", dir)
	if err != nil {
		t.Fatalf("project init: %v\n%s", err, out)
	}
	for _, f := range starter {
		if !strings.Contains(out, "wrote "+filepath.Join(dir, f.name)) {
			t.Errorf("project init does not say it wrote %s:\n%s", f.name, out)
		}
	}
	if want := "next: jido-bus project open '" + dir + "' --id my-app && jido-bus conv chat my-app"; !strings.Contains(out, want) {
		t.Errorf("project init does not say %q:\n%s", want, out)
	}

	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	info, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "my-app"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Counts.Skills != 1 || info.Counts.Commands != 1 || info.Diagnostics != 0 || info.PolicySource != ".jido/policy.yaml" {
		t.Errorf("the starter as opened: %+v, want 1 skill, 1 command, no diagnostic, the project's policy", info)
	}
	settings, _, err := n.Projects().Settings("my-app")
	if err != nil || settings.LLM.Provider != "openai" || settings.LLM.Model != "gpt-4o-mini" {
		t.Errorf("the starter's settings: %+v, %v", settings.LLM, err)
	}

	config := filepath.Join(dir, ".jido", "config.yaml")
	if err := os.WriteFile(config, []byte("llm: {provider: anthropic, model: claude-sonnet-4-5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runRoot(t, "project", "init", dir)
	if err != nil || !strings.Contains(out, "kept  "+config) {
		t.Fatalf("project init again: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(config); !strings.Contains(string(got), "anthropic") {
		t.Errorf("project init overwrote %s: %s", config, got)
	}
}

// TestProjectInitWritesOnlyInsideTheFolder: a .jido that links out of the
// folder is not written through.
func TestProjectInitWritesOnlyInsideTheFolder(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, ".jido")); err != nil {
		t.Fatal(err)
	}
	if out, err := runRoot(t, "project", "init", dir); err == nil {
		t.Errorf("project init through a .jido linking out: no error\n%s", out)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("project init wrote outside the folder: %v", entries)
	}
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestWithinReroots: a call with Within runs in the sandbox it makes from
// the runner's (a conversation's worktree), under the runner's policy as
// it is at the call; a Within that fails refuses the call before the tool
// runs; a call without one stays in the runner's root.
func TestWithinReroots(t *testing.T) {
	f := newFixture(t, map[string]string{"notes.txt": "checkout\n"}, nil, Options{})
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("worktree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, err := policy.OpenRoot(other)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wt.Close() })
	within := func(s *policy.Sandbox) (*policy.Sandbox, error) {
		return &policy.Sandbox{Root: wt, Policy: s.Policy, Host: s.Host}, nil
	}
	write := json.RawMessage(`{"path":"notes.txt","content":"written\n"}`)
	if _, err := f.runner.Run(context.Background(), ToolCall{Name: "write_file", Args: write, Within: within}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "notes.txt")); string(b) != "written\n" {
		t.Fatalf("the worktree's notes.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "notes.txt")); string(b) != "checkout\n" {
		t.Fatalf("the runner's root changed: %q", b)
	}
	// The policy is the runner's at the call: a denial reaches the worktree.
	denying := policy.Default()
	denying.Tools = map[string]policy.Mode{"write_file": policy.ModeDeny}
	f.runner.SetSandbox(&policy.Sandbox{Root: f.root, Policy: denying})
	if _, err := f.runner.Run(context.Background(), ToolCall{Name: "write_file", Args: write, Within: within}); err == nil {
		t.Fatal("a write the policy denies ran in the worktree")
	}
	gone := func(*policy.Sandbox) (*policy.Sandbox, error) { return nil, errors.New("worktree gone") }
	if _, err := f.runner.Run(context.Background(), ToolCall{Name: "read_file", Args: json.RawMessage(`{"path":"notes.txt"}`), Within: gone}); err == nil {
		t.Fatal("a call whose worktree is gone ran (in the checkout?)")
	}
}

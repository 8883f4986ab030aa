package projects

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestWorktreeHost: the commands of a worktree read the repository's .git
// and nothing else of its checkout — each other entry of the checkout is
// hidden (the checkout's root itself is not, or its .git would be
// covered with it) — and keep the operator's other rules.
func TestWorktreeHost(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git", "src", ".jido"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "secret.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Engine{}
	h := e.worktreeHost(root, &policy.Host{Read: []string{"/opt"}, Hide: func() []string { return []string{root, "/data"} }, AllowWeaker: true})
	if !slices.Contains(h.Read, filepath.Join(root, ".git")) || !slices.Contains(h.Read, "/opt") || !h.AllowWeaker {
		t.Fatalf("read %v, allow weaker %v", h.Read, h.AllowWeaker)
	}
	hidden := h.Hide()
	for _, want := range []string{"/data", filepath.Join(root, "src"), filepath.Join(root, ".jido"), filepath.Join(root, "secret.txt")} {
		if !slices.Contains(hidden, want) {
			t.Errorf("%s is not hidden: %v", want, hidden)
		}
	}
	for _, not := range []string{root, filepath.Join(root, ".git")} {
		if slices.Contains(hidden, not) {
			t.Errorf("%s is hidden, which hides the repository git needs: %v", not, hidden)
		}
	}
}

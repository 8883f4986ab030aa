package assets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project folder may be someone else's clone: a note or a workflow that
// is a symbolic link (here to a file outside the data directory) is
// refused, never read, and the rest loads.
func TestSymlinkedAssetsAreRefused(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("# Secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"skill_graph", "workflows"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, filepath.Join(dir, d, "link.md")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "skill_graph", "index.md"), []byte("# I\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	g, diags := BuildGraph(root.FS())
	if _, ok := g.Node("link"); ok || g.Len() != 1 {
		t.Fatalf("a symlinked note loaded (%d notes)", g.Len())
	}
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "skill_graph/link.md: is a symlink") {
		t.Fatalf("graph diagnostics %v", diags)
	}
	ws, diags := LoadWorkflows(root.FS(), knownTools)
	if len(ws) != 0 || len(diags) != 1 || !strings.Contains(diags[0].String(), "workflows/link.md: is a symlink") {
		t.Fatalf("workflows %v, diagnostics %v", ws, diags)
	}
}

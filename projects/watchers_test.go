package projects_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/projects"
)

// TestOnAssetsChanged: a gateway hears of each change to what a project
// offers (open, a reload that changed something, close), and nothing of a
// reload that changed nothing or after it cancelled.
func TestOnAssetsChanged(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	var mu sync.Mutex
	var got []string
	cancel := e.OnAssetsChanged(func(project string) {
		// The engine's locks are free here: calling back must not deadlock.
		if _, err := e.ToolDetails(project); err != nil && project != "p1" {
			t.Errorf("ToolDetails(%s): %v", project, err)
		}
		mu.Lock()
		got = append(got, project)
		mu.Unlock()
	})
	dir := projectDir(t)
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Reload(ctx, "p1"); err != nil { // nothing changed
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{".jido/commands/bye.md": "Bye $1\n"})
	if r, err := e.Reload(ctx, "p1"); err != nil || !r.Changed {
		t.Fatalf("reload: %+v %v", r, err)
	}
	if err := e.CloseProject(ctx, "p1", ""); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := e.Open(ctx, projects.OpenRequest{Root: filepath.Clean(dir), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"p1", "p1", "p1"}; !slices.Equal(got, want) {
		t.Errorf("notified %v, want %v (open, changed reload, close)", got, want)
	}
}

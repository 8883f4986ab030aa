package node

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects"
)

// TestOpenAtStart: Config.Open (serve --open) opens its projects before
// Start returns; the same list after a restart leaves the restored
// project as it is; a root that does not exist fails the start, naming it.
func TestOpenAtStart(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	start := func(open ...projects.OpenRequest) (*Node, error) {
		return Start(context.Background(), Config{DataDir: dir, NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true, Open: open})
	}
	n, err := start(projects.OpenRequest{Root: root, ID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Projects().Get("p1"); err != nil {
		t.Fatalf("p1 after Start: %v", err)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err = start(projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatalf("the same --open after a restart: %v", err)
	}
	if got := n.ProjectOn(root); got != "p1" {
		t.Fatalf("ProjectOn(root) = %q, want p1", got)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	missing := root + "/nope"
	if n, err = start(projects.OpenRequest{Root: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		if n != nil {
			n.Shutdown(context.Background())
		}
		t.Fatalf("a root that does not exist: %v, want a failed start naming it", err)
	}
	// The failed start released the data dir.
	n, err = start()
	if err != nil {
		t.Fatal(err)
	}
	n.Shutdown(context.Background())
}

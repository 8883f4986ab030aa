package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
)

// openProjects opens the projects of serve --open. A project already open
// on that root (restored from the last run) is left as it is, so the same
// command line serves again after a restart; any other refusal stops the
// start, naming the path.
func openProjects(ctx context.Context, n *node.Node, specs []string, log *slog.Logger) error {
	for _, spec := range specs {
		path, id, _ := strings.Cut(spec, "=")
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("--open %s: %w", spec, err)
		}
		if open := openOn(n, abs); open != "" {
			log.Info("project already open", "project", open, "root", abs)
			continue
		}
		info, err := n.Projects().Open(ctx, projects.OpenRequest{Root: abs, ID: id})
		if err != nil {
			return fmt.Errorf("--open %s: %w", spec, err)
		}
		log.Info("project opened", "project", info.ID, "root", info.Root)
	}
	return nil
}

// openOn returns the id of the open project whose root is root (compared
// as real paths), or "".
func openOn(n *node.Node, root string) string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	for _, p := range n.Projects().List() {
		if p.Root == real {
			return p.ID
		}
	}
	return ""
}

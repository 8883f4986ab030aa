package projects

import (
	"context"
	"fmt"
	"path/filepath"
)

// OpenEach opens the projects reqs name (serve --open). A project already open
// on that root (restored from the last run) is left as it is; any other
// refusal stops the start, naming the root.
func (e *Engine) OpenEach(ctx context.Context, reqs []OpenRequest) error {
	for _, req := range reqs {
		abs, err := filepath.Abs(req.Root)
		if err != nil {
			return fmt.Errorf("open %s: %w", req.Root, err)
		}
		if id := e.ProjectOn(abs); id != "" {
			e.log.Info("project already open", "project", id, "root", abs)
			continue
		}
		req.Root = abs
		if _, err := e.Open(ctx, req); err != nil {
			return fmt.Errorf("open %s: %w", abs, err)
		}
	}
	return nil
}

// ProjectOn returns the id of the open project whose root is root (compared
// as real paths), or "".
func (e *Engine) ProjectOn(root string) string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	for _, p := range e.List() {
		if p.Root == real {
			return p.ID
		}
	}
	return ""
}

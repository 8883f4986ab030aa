package tools

import (
	"context"
	"sync"

	"github.com/jido-bus/jido-bus/projects/checkpoint"
)

// Checkpointer keeps a file's content before a conversation's tool
// changes it (projects/checkpoint.Store, per project): conv rewind puts
// it back. Keep returns the content's hash; it must be safe for
// concurrent use.
type Checkpointer interface {
	Keep(conversation string, content []byte) (string, error)
}

// MaxCheckpointBytes is the largest previous content a write keeps; a
// larger file is changed all the same and its change says it was not
// kept, so a rewind names it rather than restoring something else.
const MaxCheckpointBytes = 16 << 20

// FileChange is what one write of a conversation's tool did to a file:
// its path in the project, the hash of its content before ("" when it
// did not exist) and after. It goes into the call's logged outcome
// (conversation.tool.completed data.files), so the log knows which step
// changed what.
type FileChange struct {
	Path   string `json:"path"`
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
	// NotKept says why the content before is not in the checkpoint store
	// (too large, the store full): a rewind cannot restore it.
	NotKept string `json:"not_kept,omitempty"`
}

// fileChanges collects the changes of one call and the calls it makes (a
// workflow's steps), in order.
type fileChanges struct {
	mu   sync.Mutex
	list []FileChange
}

type changesKey struct{}

// withChanges returns ctx carrying a collector, the one ctx already
// carries (a workflow step's, its workflow's) or a new one; owned is
// true for a new one, whose changes are the call's result.
func withChanges(ctx context.Context) (context.Context, *fileChanges, bool) {
	if fc, ok := ctx.Value(changesKey{}).(*fileChanges); ok {
		return ctx, fc, false
	}
	fc := &fileChanges{}
	return context.WithValue(ctx, changesKey{}, fc), fc, true
}

func (f *fileChanges) add(c FileChange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, c)
}

func (f *fileChanges) take() []FileChange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.list
}

// writeFile writes path for the call through its sandbox, first keeping
// the file's content in the runner's checkpoints when the call is a
// conversation's. The previous content is read from the root without the
// policy's read rule: it is kept in the node's data dir, shown to
// nobody, and only ever written back to the same path.
func (c *Call) writeFile(path string, data []byte) error {
	cp := c.runner.checkpoints
	if cp == nil || c.conversation == "" || c.changes == nil {
		return c.Sandbox.WriteFile(c.Name, path, data, 0o644)
	}
	rel, err := c.Sandbox.Root.Resolve(path)
	if err != nil {
		return c.Sandbox.WriteFile(c.Name, path, data, 0o644) // the write names the error
	}
	change := FileChange{Path: rel, After: checkpoint.Hash(data)}
	old, err := c.Sandbox.Root.ReadFile(rel, MaxCheckpointBytes)
	switch {
	case err == nil:
		change.Before = checkpoint.Hash(old)
		if _, kerr := cp.Keep(c.conversation, old); kerr != nil {
			change.NotKept = kerr.Error()
			c.Logf("the content of %s before this change was not kept for a rewind: %v", rel, kerr)
		}
	case isNotFound(err):
	default:
		// Too large, or not readable as a file (a directory, which the
		// write then fails on): changed, if at all, without a checkpoint.
		change.Before, change.NotKept = "unknown", err.Error()
		c.Logf("the content of %s before this change was not kept for a rewind: %v", rel, err)
	}
	if err := c.Sandbox.WriteFile(c.Name, path, data, 0o644); err != nil {
		return err
	}
	c.changes.add(change)
	return nil
}

// changesOf is the collector ctx carries (withChanges), or nil.
func changesOf(ctx context.Context) *fileChanges {
	fc, _ := ctx.Value(changesKey{}).(*fileChanges)
	return fc
}

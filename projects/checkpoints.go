package projects

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/checkpoint"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// projectCheckpoints is one project's view of the node's checkpoint
// store (tools.Checkpointer): its conversations' keys are
// <project>/<conversation>, as the log names them.
type projectCheckpoints struct {
	s  *checkpoint.Store
	id string
}

func (p projectCheckpoints) Keep(conv string, content []byte) (string, error) {
	return p.s.Keep(p.id+"/"+conv, content)
}

// checkpointer is the runner's Checkpointer of project id; nil when the
// node keeps no checkpoints.
func (e *Engine) checkpointer(id string) tools.Checkpointer {
	if e.cfg.Checkpoints == nil {
		return nil
	}
	return projectCheckpoints{s: e.cfg.Checkpoints, id: id}
}

// The methods below are what conv rewind needs of the node's files
// (convapi.Files): a project's files as they are now, the contents kept
// before its conversations changed them, and writing them back.

// FileHash is checkpoint.Hash of file path now, in the root conversation
// key (<project>/<conversation>) works in, "" when it does not exist.
func (e *Engine) FileHash(key, path string) (string, error) {
	root, err := e.convRoot(key)
	if err != nil {
		return "", err
	}
	data, err := root.ReadFile(path, tools.MaxCheckpointBytes)
	if err != nil {
		if bus.ErrorType(err) == bus.ReasonNotFound || isNotExist(err) {
			return "", nil
		}
		return "", err
	}
	return checkpoint.Hash(data), nil
}

// RestoreFile writes content to file path in the root conversation key
// works in; nil content removes the file (it did not exist). It writes
// through that root, so the path cannot lead out of it.
func (e *Engine) RestoreFile(key, path string, content []byte) error {
	root, err := e.convRoot(key)
	if err != nil {
		return err
	}
	if content == nil {
		if err := root.Remove(path); err != nil && bus.ErrorType(err) != bus.ReasonNotFound && !isNotExist(err) {
			return err
		}
		return nil
	}
	return root.WriteFile(path, content, 0o644)
}

// convRoot is the root conversation key works in: its own worktree when
// it was started with one — a rewind must put files back where its tools
// wrote them, never into the checkout — else its project's.
func (e *Engine) convRoot(key string) (*policy.Root, error) {
	id, conv, ok := strings.Cut(key, "/")
	if !ok {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "conversation %q is not <project>/<conversation>", key)
	}
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	branch, err := e.worktreeBranch(key)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "cannot tell whether conversation %s works in a worktree (%v); nothing was done", key, err)
	}
	if branch == "" {
		return p.box().Root, nil
	}
	root, err := e.trees.open(key, e.worktreePath(id, conv))
	if err != nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "the worktree of conversation %s (branch %s) cannot be opened: %v; nothing was done in the checkout instead", key, branch, err)
	}
	return root, nil
}

// CheckpointContent is a content kept before a change
// (checkpoint.ErrNotKept when it is not).
func (e *Engine) CheckpointContent(hash string) ([]byte, error) {
	if e.cfg.Checkpoints == nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "this node keeps no checkpoints (it has no data dir)")
	}
	return e.cfg.Checkpoints.Content(hash)
}

// ShareCheckpoints makes conversation conv (a rewind's fork) hold the
// contents hashes, so that it may rewind past its start too.
func (e *Engine) ShareCheckpoints(conv string, hashes []string) error {
	if e.cfg.Checkpoints == nil {
		return nil
	}
	return e.cfg.Checkpoints.Ref(conv, hashes)
}

// ForgetCheckpoints drops what conversation conv kept (it ended): the
// contents no other conversation holds are removed.
func (e *Engine) ForgetCheckpoints(conv string) error {
	if e.cfg.Checkpoints == nil {
		return nil
	}
	return e.cfg.Checkpoints.Forget(conv)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// forgetStopped forgets a stopped conversation's checkpoints; a failure
// leaves them to the store's cap, which forgets the oldest first.
func (e *Engine) forgetStopped(key string) {
	if err := e.ForgetCheckpoints(key); err != nil {
		e.log.Warn("the checkpoints of a stopped conversation were not removed", "conversation", key, "err", err)
	}
}

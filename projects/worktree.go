package projects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// A conversation may work in its own git worktree (git worktree add) on
// its own branch, jido/<conversation>, so that two conversations of a
// project never edit the same files. The worktree is made at the
// conversation's start (StartWorktree) in <Config.Worktrees>/<project>/
// <conversation>, outside every project root and outside the node's data
// dir, and is named in its conversation.started; from then on each tool
// call of the conversation runs with the worktree as its root, under the
// project's policy (CallTool's Within). The engine takes the folder from
// its own configuration, never from the log, so an event cannot point a
// conversation elsewhere; a worktree gone from the disk refuses the
// conversation's calls instead of letting them fall back to the checkout.
//
// Commands of a worktree conversation read the main repository's .git
// (the worktree's .git is a file pointing into it) read-only, so git
// status, diff and log work and nothing moves a branch or writes an
// object of the repository; the rest of the checkout and every other
// worktree are hidden from them, as every worktree is from the commands
// of the project's checkout.

// WorktreeBranchPrefix starts the branch of a conversation's worktree.
const WorktreeBranchPrefix = "jido/"

// ReasonNotGit refuses a worktree for a project that is not a git
// repository with a commit.
const ReasonNotGit = "not_git"

// gitSafe are git options every git the node runs takes: no hook of the
// repository runs (a hook would run as the node, outside any sandbox).
var gitSafe = []string{"-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}

// worktreeBase is the folder of every worktree, or "" when the node has
// none (no data dir and no Config.Worktrees).
func (e *Engine) worktreeBase() string {
	if e.cfg.Worktrees != "" {
		return filepath.Clean(e.cfg.Worktrees)
	}
	if e.nodeDir.path == "" {
		return ""
	}
	return e.nodeDir.path + "-worktrees"
}

// worktreePath is where the worktree of conversation conv of project id
// is, by the engine's configuration alone.
func (e *Engine) worktreePath(id, conv string) string {
	return filepath.Join(e.worktreeBase(), id, conv)
}

// StartWorktree makes the git worktree conversation conv of project id
// works in, when asked (conv start --worktree) or when the project's
// .jido/config.yaml says worktree: true; otherwise it returns nil.
// Refusals: not_git (the project root is not the top of a git work tree
// with a commit), invalid_request (the node has no folder for worktrees,
// or it lies inside a project root or the node's data dir), and git's own
// failure, said as git said it.
func (e *Engine) StartWorktree(ctx context.Context, id, conv string, asked bool) (*conversation.Worktree, error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	if !asked {
		s, _, err := e.Settings(id)
		if err != nil {
			// A mistake elsewhere in the config fails every model call of
			// the conversation, saying what, so nothing of it runs; its
			// worktree key alone decides here, and a file no YAML reader
			// reads runs nothing either.
			s.Worktree = e.worktreeKey(p)
		}
		if !s.Worktree {
			return nil, nil
		}
	}
	why := "conv start --worktree asked for one"
	if !asked {
		why = "the project's " + p.dataDir + "/" + ConfigFile + " says worktree: true"
	}
	top, err := git(ctx, p.root, "rev-parse", "--show-toplevel")
	if err != nil || filepath.Clean(top) != p.root {
		return nil, bus.Errorf(ReasonNotGit, "project %s is not a git repository (its root %s is not the top of a git work tree), and %s: a conversation's worktree needs one; run git init and commit there, or start the conversation without a worktree", id, p.root, why)
	}
	if _, err := git(ctx, p.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return nil, bus.Errorf(ReasonNotGit, "project %s's repository has no commit yet, and %s: a worktree starts from one; commit once in %s, or start the conversation without a worktree", id, why, p.root)
	}
	base := e.worktreeBase()
	if base == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "this node has no folder for worktrees (no data dir); run it with a --data-dir, or start the conversation without a worktree")
	}
	if err := e.checkWorktreeBase(base); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(base, id), 0o700); err != nil {
		return nil, fmt.Errorf("worktree folder for project %s: %w", id, err)
	}
	wt := &conversation.Worktree{Branch: WorktreeBranchPrefix + conv, Path: e.worktreePath(id, conv)}
	if _, err := git(ctx, p.root, "worktree", "add", "--quiet", "-b", wt.Branch, wt.Path, "HEAD"); err != nil {
		return nil, fmt.Errorf("make the worktree of conversation %s/%s: %w", id, conv, err)
	}
	e.log.Info("conversation worktree made", "project", id, "conversation", conv, "branch", wt.Branch, "path", wt.Path)
	return wt, nil
}

// checkWorktreeBase refuses a worktree folder inside (or holding) the
// node's data dir or a project's root: the data dir is hidden from every
// command, and a project's tools would reach its conversations' worktrees.
func (e *Engine) checkWorktreeBase(base string) error {
	pl, err := realPlace(base)
	if err != nil {
		return fmt.Errorf("worktree folder %s: %w", base, err)
	}
	if relate(pl, e.nodeDir) != unrelated {
		return bus.Errorf(bus.ReasonInvalidRequest, "the worktree folder %s is, holds or lies inside the node's data dir %s; give the node a worktree folder elsewhere", base, e.nodeDir.path)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, root := range e.places {
		if relate(pl, root) != unrelated {
			return bus.Errorf(bus.ReasonInvalidRequest, "the worktree folder %s is, holds or lies inside project %s's root %s, whose tools would reach the worktrees; give the node a worktree folder elsewhere", base, id, root.path)
		}
	}
	return nil
}

// EndWorktree ends the worktree of conversation conv of project id, the
// conversation stopped (so it is found by the engine's folder, not the
// conversation's state): with remove, its folder is removed unless it
// holds changes not committed (git worktree remove refuses them; the
// worktree is then kept and Kept says so), and its branch deleted unless
// it has commits the project's HEAD lacks; without, both stay. A
// conversation without a worktree gives nil.
func (e *Engine) EndWorktree(ctx context.Context, id, conv string, remove bool) (*conversation.WorktreeEnd, error) {
	key := id + "/" + conv
	if e.worktreeBase() == "" {
		return nil, nil
	}
	path := e.worktreePath(id, conv)
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		return nil, nil // none, or removed already
	}
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	e.trees.close(key)
	branch := WorktreeBranchPrefix + conv
	end := &conversation.WorktreeEnd{Branch: branch, Path: path, BranchKept: true}
	if n, err := git(ctx, p.root, "rev-list", "--count", "HEAD.."+branch); err == nil {
		end.Commits, _ = strconv.Atoi(n)
	}
	if !remove {
		return end, nil
	}
	if _, err := git(ctx, p.root, "worktree", "remove", end.Path); err != nil {
		end.Kept = fmt.Sprintf("%v; commit or discard its changes in %s, then git worktree remove %s", err, end.Path, end.Path)
		return end, nil
	}
	end.Removed = true
	if end.Commits == 0 {
		if _, err := git(ctx, p.root, "branch", "-D", branch); err == nil {
			end.BranchKept = false
		}
	}
	e.log.Info("conversation worktree removed", "project", id, "conversation", conv, "branch", branch, "branch_kept", end.BranchKept, "commits", end.Commits)
	return end, nil
}

// worktreeBranch is the branch of conversation key's worktree as its
// agent's state has it from its conversation.started ("" for none).
func (e *Engine) worktreeBranch(key string) (string, error) {
	info, err := e.rt.State(key)
	if err != nil {
		return "", err
	}
	st, err := conversation.ReadState(info.State)
	if err != nil {
		return "", err
	}
	return st.Worktree, nil
}

// worktreeOf is the Within of a call of conversation conv of project p:
// nil when the conversation works in the checkout, else the project's
// sandbox (as it is at the call) with the worktree as its root and the
// host rules of a worktree's commands.
func (e *Engine) worktreeOf(p *project, conv string) func(*policy.Sandbox) (*policy.Sandbox, error) {
	key := p.id + "/" + conv
	branch, err := e.worktreeBranch(key)
	if err == nil && branch == "" {
		return nil
	}
	return func(s *policy.Sandbox) (*policy.Sandbox, error) {
		if err != nil {
			return nil, tools.Errorf(tools.ReasonUnavailable, "cannot tell whether conversation %s works in a worktree (%v); nothing was run", key, err)
		}
		root, err := e.trees.open(key, e.worktreePath(p.id, conv))
		if err != nil {
			return nil, tools.Errorf(tools.ReasonUnavailable, "the worktree of conversation %s (branch %s) cannot be opened: %v; nothing was run in the project's checkout instead — start a new conversation", key, branch, err)
		}
		return &policy.Sandbox{Root: root, Policy: s.Policy, Host: e.worktreeHost(p.root, s.Host)}, nil
	}
}

// worktreeHost is h for the commands of a worktree of the repository at
// root: the repository's .git readable, the rest of its checkout hidden
// even where the operator's reads would show it.
func (e *Engine) worktreeHost(root string, h *policy.Host) *policy.Host {
	out := policy.Host{}
	if h != nil {
		out = *h
	}
	gitDir := filepath.Join(root, ".git")
	out.Read = append(slices.Clone(out.Read), gitDir)
	hide := out.Hide
	out.Hide = func() []string {
		var paths []string
		if hide != nil {
			for _, p := range hide() {
				// The checkout's root is hidden by its entries below, so
				// that its .git stays visible.
				if p != root {
					paths = append(paths, p)
				}
			}
		}
		entries, _ := os.ReadDir(root)
		for _, en := range entries {
			if en.Name() != ".git" {
				paths = append(paths, filepath.Join(root, en.Name()))
			}
		}
		return paths
	}
	return &out
}

// worktreeDirs are the folders of every conversation's worktree, hidden
// from every command but the worktree's own conversation's.
func (e *Engine) worktreeDirs() []string {
	base := e.worktreeBase()
	if base == "" {
		return nil
	}
	projects, _ := os.ReadDir(base)
	var out []string
	for _, pd := range projects {
		convs, _ := os.ReadDir(filepath.Join(base, pd.Name()))
		for _, c := range convs {
			out = append(out, filepath.Join(base, pd.Name(), c.Name()))
		}
	}
	return out
}

// worktreeRoots are the opened roots of conversations' worktrees, by
// conversation key, each opened once and closed when its conversation's
// worktree ends or the engine closes.
type worktreeRoots struct {
	mu    sync.Mutex
	roots map[string]*policy.Root
}

func (w *worktreeRoots) open(key, path string) (*policy.Root, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r, ok := w.roots[key]; ok {
		if _, err := os.Stat(path); err == nil {
			return r, nil
		}
		_ = r.Close()
		delete(w.roots, key)
	}
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		return nil, fmt.Errorf("%s is no worktree any more: %w", path, err)
	}
	r, err := policy.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	if w.roots == nil {
		w.roots = map[string]*policy.Root{}
	}
	w.roots[key] = r
	return r, nil
}

func (w *worktreeRoots) close(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r, ok := w.roots[key]; ok {
		_ = r.Close()
		delete(w.roots, key)
	}
}

func (w *worktreeRoots) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, r := range w.roots {
		_ = r.Close()
		delete(w.roots, k)
	}
}

// git runs git in dir with gitSafe and returns its output, trimmed; a
// failure carries what git said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append(slices.Clone(gitSafe), "-C", dir), args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return "", errors.New("git " + strings.Join(args, " ") + ": " + msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out.String()), nil
}

// worktreeKey is the worktree key of project p's config read on its own,
// for a config the strict Settings refuses for a mistake elsewhere; false
// when the file is missing or no YAML at all.
func (e *Engine) worktreeKey(p *project) bool {
	data, err := p.rootDir.ReadFile(path.Join(p.dataDir, ConfigFile), maxConfigBytes)
	if err != nil {
		return false
	}
	var f struct {
		Worktree bool `yaml:"worktree"`
	}
	if yaml.Unmarshal(data, &f) != nil {
		return false
	}
	return f.Worktree
}

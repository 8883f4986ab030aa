// Package projects is the engine of the coding assistant: it opens,
// lists, reloads and closes projects, each a folder on disk with its own
// assets, sandbox policy and tool runner, and each an agent of type
// "project" whose stream project/<id> is its audit trail.
//
// What is pure lives in the project agent (agent.go): its Cmd records each
// signal and re-emits it. What touches the world lives in the Engine: the
// root opened through policy.OpenRoot, the asset set and its watcher, the
// tool catalog and the one Runner every call goes through. The engine
// tells the agent what happened (project.started, project.assets.*,
// project.tool.*, project.stopped) and the runtime commits each before it
// is emitted. The engine waits for the commit of project.tool.started
// before a tool that may change something runs, and for that of every
// outcome before the caller is answered; a tool that only reads has its
// start committed with its outcome, in one append (tools.Observer).
package projects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/goroutines"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/checkpoint"
	"github.com/jido-bus/jido-bus/projects/layout"
	"github.com/jido-bus/jido-bus/projects/mcpclient"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// DefaultCommitTimeout bounds how long the engine waits for one of its
// signals to be committed to a project's stream.
const DefaultCommitTimeout = 30 * time.Second

// Config configures an Engine. Runtime is required.
type Config struct {
	// Runtime runs the project agents; the type AgentType must be
	// registered with it, with the stream prefix StreamPrefix.
	Runtime *runtime.Runtime
	// NodeDataDir is the node's own data dir: a project root that is it,
	// lies inside it or contains it is refused (tools could otherwise
	// read or rewrite the node's log).
	NodeDataDir string
	// HomeDir is the home folder of the user the node runs as: a project
	// root that is it or holds it is refused (its tools could otherwise
	// read the user's keys and credentials, and rewrite their shell's
	// start files). Empty: os.UserHomeDir.
	HomeDir string
	// Artifacts keeps tool outputs over the runner's cap; nil refuses
	// them with too_large.
	Artifacts tools.ArtifactStore
	// Checkpoints keep the files' contents before conversations' tools
	// change them, for conv rewind (checkpoints.go); nil keeps none.
	Checkpoints *checkpoint.Store
	// CheckpointMaxBytes bounds the store NewEngine opens in
	// NodeDataDir/checkpoints when Checkpoints is nil and NodeDataDir is
	// set: outside every project (a root holding the data dir is
	// refused), so no tool reads or rewrites what it kept. 0 means
	// checkpoint.DefaultMaxBytes.
	CheckpointMaxBytes int64
	// Limits bound the built-in tools.
	Limits tools.Limits
	// Tools are the program's own tools, added to every project's catalog
	// beside the built-ins and the assets' tools, and run like them:
	// through the project's runner (args validated against InputSchema
	// before Func runs), under its policy, recorded in its stream. A name
	// a built-in has, or that starts like an asset tool's (command_,
	// skill_, workflow_), is refused by NewEngine.
	Tools []tools.Tool
	// Sandbox is the node's operator's rules for every project's
	// commands (what they read, their caps, weaker confinement).
	Sandbox SandboxConfig
	// Runner tunes each project's runner (MaxConcurrent, OutputCap,
	// DefaultTimeout); its Sandbox, Catalog, Observer and Artifacts are
	// the engine's.
	Runner tools.Options
	// NoWatch turns the file watcher off: assets then change only on
	// Reload. Debounce is the watcher's (0: assets.DefaultDebounce).
	NoWatch  bool
	Debounce time.Duration
	// MCPRemotes are the streamable-HTTP MCP servers projects may use
	// (url: in mcp_servers:), the operator's: a project names a URL listed
	// here, exactly, and the credential sent to it is the one given here,
	// never a project's.
	MCPRemotes []MCPRemote
	// MCPMinBackoff is the first wait before an MCP server that ended is
	// started again (0: mcpclient.DefaultMinBackoff); tests shorten it.
	MCPMinBackoff time.Duration
	// Assets tune the asset loads (KnownTools is the engine's).
	Assets assets.Options
	// CommandEnv is what the node's operator lets commands inherit from
	// its environment; a project whose policy asks for more is refused at
	// open. Nil allows policy.DefaultCommandEnv and knows no secret.
	CommandEnv *policy.Inherit
	// Log is the node's event log, from which Restore reads the workflow
	// runs the last run left unfinished (workflow_resume.go); nil
	// resumes none.
	Log *eventlog.Log
	// Worktrees is the folder holding the git worktrees of the
	// conversations that work in their own (worktree.go), one
	// <project>/<conversation> folder each; empty: NodeDataDir with
	// "-worktrees" appended, beside it (never inside it: the data dir is
	// hidden from every command, and a worktree is a command's root).
	Worktrees string
	// CommitTimeout bounds each wait for a commit; 0 means
	// DefaultCommitTimeout.
	CommitTimeout time.Duration
	Logger        *slog.Logger
}

// Engine hosts the open projects of one node. It is safe for concurrent
// use.
type Engine struct {
	cfg      Config
	rt       *runtime.Runtime
	log      *slog.Logger
	nodeDir  place // NodeDataDir's (zero when none)
	home     place // HomeDir's (zero when unknown)
	builtins []tools.Tool
	builtinC *tools.Catalog
	svc      serviceTools // SetServiceTools
	mcp      mcpServers   // the projects' MCP servers (mcp_servers.go)

	mu       sync.Mutex
	projects map[string]*project // open, or listed with the error that kept them from reopening
	places   map[string]place    // project id → its root's place, from the start of Open until CloseProject
	closed   bool

	watchers assetWatchers // OnAssetsChanged
	trees    worktreeRoots // the opened roots of conversations' worktrees

	// runCtx is the context of the workflow runs Restore resumed, which
	// no caller's request holds; Close cancels it and waits for them.
	runCtx   context.Context
	stopRun  context.CancelFunc
	resuming goroutines.Group
}

// NewEngine returns an engine with no project open; Restore brings back
// the projects a previous run left open.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("projects: Config.Runtime is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = DefaultCommitTimeout
	}
	if err := cfg.Sandbox.check(); err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	e := &Engine{cfg: cfg, rt: cfg.Runtime, log: cfg.Logger, projects: map[string]*project{}, places: map[string]place{}}
	e.runCtx, e.stopRun = context.WithCancel(context.Background())
	if cfg.NodeDataDir != "" {
		pl, err := realPlace(cfg.NodeDataDir)
		if err != nil {
			return nil, fmt.Errorf("projects: node data dir %s: %w", cfg.NodeDataDir, err)
		}
		e.nodeDir = pl
		if cfg.Checkpoints == nil {
			cp, err := checkpoint.Open(filepath.Join(cfg.NodeDataDir, "checkpoints"), checkpoint.Options{MaxBytes: cfg.CheckpointMaxBytes})
			if err != nil {
				return nil, fmt.Errorf("projects: checkpoints: %w", err)
			}
			e.cfg.Checkpoints = cp
		}
	}
	if cfg.HomeDir == "" {
		cfg.HomeDir, _ = os.UserHomeDir()
	}
	if cfg.HomeDir != "" {
		// A home that cannot be found guards nothing: no folder holds it.
		e.home, _ = realPlace(cfg.HomeDir)
	}
	e.builtins = tools.Builtins(cfg.Limits)
	c, err := tools.NewCatalog(e.builtins...)
	if err != nil {
		return nil, fmt.Errorf("projects: built-in tools: %w", err)
	}
	e.builtinC = c
	if err := e.checkConfigTools(); err != nil {
		return nil, err
	}
	return e, nil
}

// OpenRequest is what Open needs; it is also the body of
// <prefix>.api.project.open.
type OpenRequest struct {
	// Root is the project's folder, absolute or relative to the node's
	// working directory; it is resolved to its real path once, here.
	Root string `json:"root"`
	// ID is the project's id, one segment of [A-Za-z0-9_-] starting with
	// a letter or digit; empty means a new ULID.
	ID string `json:"id,omitempty"`
	// DataDir is the data dir's name under the root; empty means .jido.
	DataDir string `json:"data_dir,omitempty"`
	// Policy is the project's policy in the form of policy.yaml (tools,
	// paths, commands); absent means <root>/<data dir>/policy.yaml when
	// it exists, else the defaults.
	Policy json.RawMessage `json:"policy,omitempty"`
}

// ProjectInfo describes a project.
type ProjectInfo struct {
	ID           string `json:"id"`
	Root         string `json:"root"`
	DataDir      string `json:"data_dir"`
	Stream       string `json:"stream"`
	PolicySource string `json:"policy_source,omitempty"`
	// Status is "open", or "error" for a project that could not be
	// reopened after a restart (Error says why; close it, or fix the
	// cause and restart).
	Status string     `json:"status"`
	Error  *bus.Error `json:"error,omitempty"`
	// Digest and Version name the asset set; Counts its size.
	Digest      string      `json:"digest,omitempty"`
	Version     uint64      `json:"version,omitempty"`
	Counts      AssetCounts `json:"counts"`
	Diagnostics int         `json:"diagnostics"`
	Tools       int         `json:"tools"`
	// Protection is what confines run_command on this node.
	Protection string `json:"protection,omitempty"`
	// Sandbox is what confines this project's commands: what they read,
	// their limits, whether run_command runs at all.
	Sandbox *policy.Report `json:"sandbox,omitempty"`
	// Watching is true when file changes reload the assets.
	Watching bool `json:"watching"`
	// MCPServers are the states of the MCP servers its config.yaml
	// lists (mcp_servers:): ready, restarting (its tools then fail with
	// unavailable) and why.
	MCPServers []mcpclient.State `json:"mcp_servers,omitempty"`
}

// Statuses of ProjectInfo.
const (
	StatusOpen  = "open"
	StatusError = "error"
)

// Open opens a project: it resolves and checks the root, reads the
// policy, creates the data dir's folders, loads the assets, builds the
// catalog, starts the project's agent and records project.started and
// project.assets.loaded in its stream; conversations under its id that
// are not its own are then stopped (conversations.go). Refusals are *bus.Error values:
// invalid_request (a bad id, a root that is /, not a folder, unreadable,
// the node's data dir or inside or around it, the home folder of the
// node's user or around it, inside or around another project's root, a
// bad policy), not_found (a root that does not exist), already_exists
// (the id is taken, or another project is open on the same folder, by
// whatever path).
func (e *Engine) Open(ctx context.Context, req OpenRequest) (ProjectInfo, error) {
	id := req.ID
	if id == "" {
		id = bus.NewID()
	}
	if err := ValidateID(id); err != nil {
		return ProjectInfo{}, err
	}
	dataDir := req.DataDir
	if dataDir == "" {
		dataDir = layout.DefaultDataDir
	}
	if err := layout.ValidateDataDir(dataDir); err != nil {
		return ProjectInfo{}, bus.Errorf(bus.ReasonInvalidRequest, "data_dir: %v", err)
	}
	root, err := policy.OpenRoot(req.Root)
	if err != nil {
		return ProjectInfo{}, err
	}
	keep := false
	defer func() {
		if !keep {
			root.Close()
		}
	}()
	pl, err := placeOf(root.Path())
	if err != nil {
		return ProjectInfo{}, bus.Errorf(bus.ReasonInvalidRequest, "project root %s: %v", root.Path(), err)
	}
	if err := e.checkRoot(pl); err != nil {
		return ProjectInfo{}, err
	}
	release, err := e.reserve(id, pl)
	if err != nil {
		return ProjectInfo{}, err
	}
	defer func() {
		if !keep {
			release()
		}
	}()
	if _, err := e.rt.State(id); err == nil {
		return ProjectInfo{}, bus.Errorf(runtime.ReasonAlreadyExists, "an agent %q is running already; choose another project id", id)
	}
	pol, doc, source, err := loadPolicy(root, dataDir, req.Policy)
	if err != nil {
		return ProjectInfo{}, err
	}
	if err := e.cfg.CommandEnv.Check(pol); err != nil {
		return ProjectInfo{}, fmt.Errorf("project %s: %w", id, err)
	}
	p, err := e.build(id, root, dataDir, pol, doc, source)
	if err != nil {
		return ProjectInfo{}, err
	}
	p.place = pl
	initial := map[string]any{"root": root.Path(), "data_dir": dataDir, "policy": json.RawMessage(doc), "policy_source": source}
	if _, err := e.rt.Start(ctx, runtime.StartRequest{Type: AgentType, ID: id, InitialState: initial}); err != nil {
		p.release()
		return ProjectInfo{}, err
	}
	snap := p.set.Load()
	steps := []struct {
		typ  string
		data any
	}{
		{TypeStarted, StartedData{Root: root.Path(), DataDir: dataDir, Policy: doc, PolicySource: source, Protection: policy.Protection().String()}},
		{TypeAssetsLoaded, p.assetsData(snap, nil)},
	}
	for _, s := range steps {
		if err := e.send(ctx, id, s.typ, s.data); err != nil {
			p.release()
			// The agent is started: stop it, so the id and root are
			// free again and a restart does not bring it back.
			if serr := e.rt.Stop(context.WithoutCancel(ctx), id, "open failed"); serr != nil {
				e.log.Error("stop the agent of a project that failed to open", "project", id, "err", serr)
			}
			return ProjectInfo{}, fmt.Errorf("open project %s: record %s: %w", id, s.typ, err)
		}
	}
	p.reported = snap
	keep = true
	e.disown(ctx, id)
	e.install(p)
	e.awaitMCPServers(ctx, id)
	e.log.Info("project opened", "project", id, "root", root.Path(), "policy", source, "skills", len(snap.Skills), "commands", len(snap.Commands), "diagnostics", len(snap.Diagnostics))
	info := p.info()
	info.MCPServers = e.MCPServers(id)
	return info, nil
}

// ValidateID checks a project id: an agent id of one segment (a
// conversation of the project is <project-id>/<conversation-id>).
func ValidateID(id string) error {
	if strings.Contains(id, "/") {
		return bus.Errorf(bus.ReasonInvalidRequest, "project id %q holds '/': a project id is one segment of letters, digits, '_' and '-'", id)
	}
	if err := bus.ValidateAgentID(id); err != nil {
		return bus.Errorf(bus.ReasonInvalidRequest, "project id %q: %s", id, bus.AsError(err).Message)
	}
	return nil
}

// install makes p the open project of its id and starts its watcher.
func (e *Engine) install(p *project) {
	e.mu.Lock()
	e.projects[p.id] = p
	if p.err == nil {
		e.places[p.id] = p.place
	}
	e.mu.Unlock()
	if !e.cfg.NoWatch && p.err == nil {
		e.watch(p)
	}
	if p.err == nil {
		e.startMCPServers(p)
	}
	e.watchers.notify(p.id)
}

// lookup returns open project id.
func (e *Engine) lookup(id string) (*project, error) {
	e.mu.Lock()
	p, ok := e.projects[id]
	e.mu.Unlock()
	switch {
	case !ok:
		return nil, bus.Errorf(bus.ReasonNotFound, "no project %q is open; list them with project ls", id)
	case p == nil:
		return nil, bus.Errorf(bus.ReasonNotFound, "project %q is still opening; retry in a moment", id)
	}
	return p, nil
}

// usable returns open project id, refusing one listed with an error.
func (e *Engine) usable(id string) (*project, error) {
	p, err := e.lookup(id)
	if err != nil {
		return nil, err
	}
	if p.err != nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "project %s could not be reopened: %s; close it (project close %s) and open it again once fixed", id, p.err.Message, id)
	}
	if g := p.gone(); g != nil {
		return nil, g
	}
	return p, nil
}

// Get describes project id.
func (e *Engine) Get(id string) (ProjectInfo, error) {
	p, err := e.lookup(id)
	if err != nil {
		return ProjectInfo{}, err
	}
	in := p.info()
	in.MCPServers = e.MCPServers(id)
	return in, nil
}

// List describes every project, open or in error, by id.
func (e *Engine) List() []ProjectInfo {
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		if p != nil {
			ps = append(ps, p)
		}
	}
	e.mu.Unlock()
	slices.SortFunc(ps, func(a, b *project) int { return strings.Compare(a.id, b.id) })
	out := make([]ProjectInfo, len(ps))
	for i, p := range ps {
		out[i] = p.info()
		out[i].MCPServers = e.MCPServers(p.id)
	}
	return out
}

// CloseProject closes project id: project.stopped is committed (and its
// agent stops, as it decides, its conversations with it: CloseProject
// returns once they have stopped), the watcher stops and the root is
// released. A project listed with an error is closed the same way.
func (e *Engine) CloseProject(ctx context.Context, id, reason string) error {
	p, err := e.lookup(id)
	if err != nil {
		return err
	}
	if reason == "" {
		reason = "closed"
	}
	convs := e.children(id) // they stop with the project's agent
	if err := e.send(ctx, id, TypeStopped, StoppedData{Reason: reason}); err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
		return fmt.Errorf("close project %s: %w", id, err)
	}
	// The agent stops as it decided (a Stop directive, run after the
	// commit); wait for it, so the id is free when CloseProject returns.
	wctx, cancel := context.WithTimeout(ctx, e.cfg.CommitTimeout)
	_, err = e.rt.Await(wctx, id)
	cancel()
	if err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
		return fmt.Errorf("close project %s: its agent has not stopped: %w", id, err)
	}
	if err := e.awaitConversations(ctx, convs); err != nil {
		return fmt.Errorf("close project %s: %w", id, err)
	}
	e.mu.Lock()
	if e.projects[id] == p {
		delete(e.projects, id)
		delete(e.places, id)
	}
	e.mu.Unlock()
	e.stopMCPServers(id)
	p.release()
	e.watchers.notify(id)
	e.log.Info("project closed", "project", id, "reason", reason)
	return nil
}

// Close stops every watcher and releases every root, leaving the
// projects open in the log: they come back at the next start. Open is
// refused from then on. It cancels the workflow runs Restore resumed and
// waits for them to return (a run cut short resumes at the next start);
// it returns nil, and is an io.Closer.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		if p != nil {
			ps = append(ps, p)
		}
	}
	e.mu.Unlock()
	e.stopRun()
	e.resuming.Wait()
	for _, p := range ps {
		e.stopMCPServers(p.id)
		p.release()
	}
	e.trees.closeAll()
	return nil
}

// send hands the project agent id one of the engine's signals and waits
// for its commit.
func (e *Engine) send(ctx context.Context, id, typ string, data any) error {
	return e.sendAll(ctx, id, entry{typ, data})
}

// entry is one signal for a project's stream: its type and data.
type entry struct {
	typ  string
	data any
}

// sendAll commits es to project id's stream in one append (the
// runtime's CallAll), in order, and returns once each is committed.
func (e *Engine) sendAll(ctx context.Context, id string, es ...entry) error {
	sigs := make([]bus.Signal, len(es))
	now := time.Now().UTC()
	for i, en := range es {
		sig, err := agents.NewSignal(en.typ, en.data)
		if err != nil {
			return err
		}
		sig.SetID(bus.NewID())
		sig.SetSource(Source)
		sig.SetTime(now)
		sigs[i] = sig
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.CommitTimeout)
	defer cancel()
	return e.rt.CallAll(ctx, id, sigs...)
}

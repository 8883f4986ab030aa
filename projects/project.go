package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/layout"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// project is the process side of one open project: what the agent's state
// names (root, data dir, policy) made real.
type project struct {
	id      string
	root    string // real path
	place   place  // the root's, for the checks of other roots
	dataDir string // the name under the root
	layout  layout.Layout
	// rootDir is the root opened once; every sandbox the project has had
	// (one per policy) shares it, and release closes it.
	rootDir *policy.Root
	set     *assets.Set
	// runner holds the sandbox calls run in (box), swapped when the
	// policy changes.
	runner *tools.Runner

	// pmu serializes the checks of the policy file and guards what they
	// change: the policy's document and source (the agent's state keeps
	// them too), and refused, the reason the file was last refused ("" when
	// the file in force was taken), so that a refusal is recorded once.
	pmu          sync.Mutex
	policyDoc    json.RawMessage
	policySource string
	refused      string
	// err is set for a project listed after a restart that could not be
	// reopened; nothing else is then set but id, root and dataDir.
	err *bus.Error
	// rootInfo is the root folder as opened, for gone.
	rootInfo os.FileInfo
	// goneLogged keeps the watcher from logging the root's loss at
	// each of its events.
	goneLogged atomic.Bool

	// mu serializes reporting the asset set: reported is the snapshot
	// the stream last heard of, and each report is the diff from it, so
	// the watcher and a manual reload never report out of order.
	mu       sync.Mutex
	reported *assets.Snapshot
	// versionBase is added to the snapshots' versions, so a project's
	// asset version keeps counting across restarts.
	versionBase uint64

	wmu     sync.Mutex
	watcher *assets.Watcher
	done    bool
}

// build opens the process side of project id on root (which it then
// owns): the data dir's folders, the asset set, the catalog, the runner.
func (e *Engine) build(id string, root *policy.Root, dataDir string, pol *policy.Policy, doc json.RawMessage, source string) (*project, error) {
	l, err := layout.New(root.Path(), dataDir)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "data_dir: %v", err)
	}
	if _, err := l.Ensure(); err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project %s: %v", id, err)
	}
	p := &project{id: id, root: root.Path(), dataDir: dataDir, layout: l, policyDoc: doc, policySource: source, rootDir: root, set: &assets.Set{}}
	p.statRoot()
	snap, err := assets.Load(l.DataDir, e.loadOptions())
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project %s: load its assets: %v", id, err)
	}
	p.set.Swap(snap)
	cat, err := e.catalog(id, snap)
	if err != nil {
		return nil, err
	}
	ropts := e.cfg.Runner
	ropts.Sandbox, ropts.Catalog, ropts.Artifacts = e.sandbox(root, pol), cat, e.cfg.Artifacts
	ropts.Observer = &observer{e: e, id: id}
	ropts.Checkpoints = e.checkpointer(id)
	if p.runner, err = tools.NewRunner(ropts); err != nil {
		return nil, fmt.Errorf("project %s: %w", id, err)
	}
	return p, nil
}

// sandbox is the sandbox of the project on root under pol: the node's
// operator's rules for its commands (Host) and what they may inherit come
// from the node, never from the policy.
func (e *Engine) sandbox(root *policy.Root, pol *policy.Policy) *policy.Sandbox {
	return &policy.Sandbox{Root: root, Policy: pol.WithInherit(e.cfg.CommandEnv), Host: e.host(root.Path())}
}

// box is the sandbox p's calls run in now.
func (p *project) box() *policy.Sandbox { return p.runner.Sandbox() }

func (e *Engine) loadOptions() assets.Options {
	o := e.cfg.Assets
	o.Previous = nil
	o.KnownTools = e.builtinC.Has
	return o
}

// catalog is the built-in tools plus the tools of snap's assets and
// project id's custom tools (customTools).
func (e *Engine) catalog(id string, snap *assets.Snapshot) (*tools.Catalog, error) {
	a := tools.Assets{Snapshot: snap, Graph: snap.Graph}
	names := make([]string, 0, len(snap.Workflows))
	for n := range snap.Workflows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a.Workflows = append(a.Workflows, snap.Workflows[n])
	}
	ts := append(append([]tools.Tool(nil), e.builtins...), tools.AssetTools(a, e.cfg.Limits)...)
	ts = append(ts, e.customTools(id)...)
	c, err := tools.NewCatalog(ts...)
	if err != nil {
		return nil, fmt.Errorf("build the tool catalog: %w", err)
	}
	return c, nil
}

// watch starts p's watcher; a failure to watch is logged and leaves
// Reload as the way assets change.
func (e *Engine) watch(p *project) {
	w, err := assets.Watch(p.set, p.layout.DataDir, assets.WatchOptions{
		Debounce: e.cfg.Debounce,
		Load:     e.loadOptions(),
		OnChange: func(_, _ *assets.Snapshot, _ assets.Changes) {
			// A root gone is not an asset change: recording it would
			// empty the catalog; the project shows the error instead.
			if g := p.gone(); g != nil {
				if !p.goneLogged.Swap(true) {
					e.log.Error("project root is gone; its assets are no longer reloaded", "project", p.id, "err", g)
				}
				return
			}
			changes, err := e.report(context.Background(), p)
			if err != nil {
				// Nobody waits for this answer, and nothing changed: the
				// tools keep the catalog the stream knows.
				e.log.Error("asset change not recorded; the tools keep the previous catalog (project reload tries again)", "project", p.id, "err", err)
			}
			if !changes.Empty() {
				e.watchers.notify(p.id)
			}
		},
		OnReload: func() {
			if p.gone() != nil {
				return
			}
			change, err := e.reloadPolicy(context.Background(), p)
			if err != nil {
				// The file is checked again at the next change, or by
				// project reload; the policy in force stays.
				e.log.Error("policy file change not recorded; the tools keep the policy in force (project reload tries again)", "project", p.id, "err", err)
			}
			e.logPolicy(p.id, change)
			if change.Changed {
				e.watchers.notify(p.id)
			}
		},
		OnError: func(err error) {
			if g := p.gone(); g != nil {
				if !p.goneLogged.Swap(true) {
					e.log.Error("project root is gone; its assets are no longer reloaded", "project", p.id, "err", g, "watcher", err)
				}
				return
			}
			e.log.Warn("project assets watcher", "project", p.id, "err", err)
		},
	})
	if err != nil {
		e.log.Warn("project assets are not watched; reload them with project reload", "project", p.id, "err", err)
		return
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.done {
		w.Close()
		return
	}
	p.watcher = w
}

// report records the current asset set when it differs from the one the
// stream last heard of: project.assets.reloaded with the diff, then the
// new catalog. It returns the diff (empty: nothing recorded, nothing
// changed for the tools).
func (e *Engine) report(ctx context.Context, p *project) (assets.Changes, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.set.Load()
	if cur == p.reported {
		return assets.Changes{}, nil
	}
	changes := assets.Diff(p.reported, cur)
	if changes.Empty() {
		p.reported = cur
		return changes, nil
	}
	cat, err := e.catalog(p.id, cur)
	if err != nil {
		return changes, err
	}
	// Committed first, then used: no call runs a tool of a catalog the
	// stream has not heard of. A failed commit leaves the old catalog in
	// use and p.reported behind, so the next report records the change.
	if err := e.send(ctx, p.id, TypeAssetsReloaded, p.assetsData(cur, &changes)); err != nil {
		return assets.Changes{}, err
	}
	p.runner.SetCatalog(cat)
	p.reported = cur
	return changes, nil
}

// catalog is the catalog p's tools run from, once any report in flight
// is done: project.assets.reloaded is emitted at its commit, before the
// report swaps the catalog, and a client that hears it and asks at once
// (jido-bus mcp --nats-url) must get the catalog it announced.
func (p *project) catalog() *tools.Catalog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runner.Catalog()
}

// Reload loads project id's assets again (only changed files are read)
// and records the change, if any, as project.assets.reloaded; then it
// reads the policy file again (reloadPolicy). A reload that changes
// nothing appends nothing; Changed and Policy say what it was.
func (e *Engine) Reload(ctx context.Context, id string) (ReloadResult, error) {
	p, err := e.usable(id)
	if err != nil {
		return ReloadResult{}, err
	}
	if _, _, _, err := p.set.Reload(p.layout.DataDir, e.loadOptions()); err != nil {
		return ReloadResult{}, bus.Errorf(bus.ReasonUnavailable, "project %s: reload its assets: %v", id, err)
	}
	changes, err := e.report(ctx, p)
	var pol PolicyReload
	if err == nil {
		pol, err = e.reloadPolicy(ctx, p)
		e.logPolicy(id, pol)
	}
	if err == nil {
		// After the policy: a server started again runs under the new one.
		err = e.reloadMCPServers(ctx, p)
	}
	if !changes.Empty() || pol.Changed {
		e.watchers.notify(id)
	}
	if err != nil {
		return ReloadResult{}, err
	}
	info := p.info()
	info.MCPServers = e.MCPServers(id)
	return ReloadResult{Project: info, Changed: !changes.Empty(), Changes: changes, Policy: pol}, nil
}

// ReloadResult is Reload's answer: Changed and Changes are the assets';
// Policy what the policy file's check found.
type ReloadResult struct {
	Project ProjectInfo    `json:"project"`
	Changed bool           `json:"changed"`
	Changes assets.Changes `json:"changes"`
	Policy  PolicyReload   `json:"policy"`
}

func (p *project) assetsData(s *assets.Snapshot, changes *assets.Changes) AssetsData {
	d := AssetsData{Digest: s.Digest, Version: s.Version + p.versionBase, Counts: countsOf(s), Diagnostics: len(s.Diagnostics), Changes: changes}
	d.DiagnosticList = s.Diagnostics[:min(len(s.Diagnostics), maxListedDiagnostics)]
	return d
}

// info describes p.
func (p *project) info() ProjectInfo {
	p.pmu.Lock()
	source, refused := p.policySource, p.refused
	p.pmu.Unlock()
	in := ProjectInfo{ID: p.id, Root: p.root, DataDir: p.dataDir, Stream: Stream(p.id), PolicySource: source, Status: StatusOpen}
	if p.err != nil {
		in.Status, in.Error = StatusError, p.err
		return in
	}
	if g := p.gone(); g != nil {
		in.Status, in.Error = StatusError, g
	}
	s := p.set.Load()
	in.Digest, in.Version, in.Counts, in.Diagnostics = s.Digest, s.Version+p.versionBase, countsOf(s), len(s.Diagnostics)
	if refused != "" {
		in.Diagnostics++
	}
	box := p.box()
	in.Tools = len(p.catalog().List(box.Policy))
	prot := policy.Protection()
	in.Protection = prot.String()
	report := box.Report(prot)
	in.Sandbox = &report
	p.wmu.Lock()
	in.Watching = p.watcher != nil
	p.wmu.Unlock()
	return in
}

// release stops p's watcher and closes its root. Calls running finish
// with the root closed under them (their file operations then fail).
func (p *project) release() {
	p.wmu.Lock()
	w := p.watcher
	p.watcher, p.done = nil, true
	p.wmu.Unlock()
	if w != nil {
		_ = w.Close()
	}
	if p.rootDir != nil {
		_ = p.rootDir.Close()
	}
}

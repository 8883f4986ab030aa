package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/layout"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// agentState is what Restore reads of a project agent's state.
type agentState struct {
	Root         string          `json:"root"`
	DataDir      string          `json:"data_dir"`
	Policy       json.RawMessage `json:"policy"`
	PolicySource string          `json:"policy_source"`
	Status       string          `json:"status"`
	Assets       struct {
		Digest  string `json:"digest"`
		Version uint64 `json:"version"`
	} `json:"assets"`
}

// Restore brings back the projects a previous run left open: after the
// runtime's recovery, each running project agent's process side is
// opened again from its state (the root, with the same refusals as Open,
// the policy it was opened with, the assets loaded from disk, the
// catalog). A project whose assets changed while the node was down gets
// a project.assets.reloaded entry, one whose policy file changed a
// project.policy.changed (or project.policy.refused) entry, and the conversations under its id
// that are not its own are stopped (conversations.go). A project
// that cannot be reopened (its root vanished, became a link elsewhere,
// or is refused: of two nested roots, the outer one) is listed with its
// error rather than dropped; closing it stops its agent. A workflow run
// the node's stop cut short goes on, or is recorded interrupted
// (workflow_resume.go). It returns how many projects came back open.
func (e *Engine) Restore(ctx context.Context) int {
	type listedState struct {
		id string
		st agentState
	}
	var all []listedState
	for _, listed := range e.rt.ListSome(runtime.ListOptions{Type: AgentType}) {
		info, err := e.rt.State(listed.ID)
		if err != nil {
			e.log.Error("project agent unreadable; not restored", "project", listed.ID, "err", err)
			continue
		}
		var st agentState
		if err := json.Unmarshal(info.State, &st); err != nil {
			e.log.Error("project agent state unreadable; not restored", "project", listed.ID, "err", err)
			continue
		}
		if st.Status == "closed" {
			continue // its stop is a directive recovery runs
		}
		all = append(all, listedState{listed.ID, st})
	}
	// Deeper roots first: of two nested roots an older node left open,
	// the outer one is refused, whose tools would reach the inner one's
	// .jido/, rather than the inner one.
	sort.SliceStable(all, func(i, j int) bool {
		return strings.Count(all[i].st.Root, string(filepath.Separator)) > strings.Count(all[j].st.Root, string(filepath.Separator))
	})
	n := 0
	for _, listed := range all {
		id, st := listed.id, listed.st
		p, err := e.reopen(ctx, id, st)
		if err != nil {
			e.log.Error("project could not be reopened; listed with its error", "project", id, "root", st.Root, "err", err)
			p = &project{id: id, root: st.Root, dataDir: st.DataDir, policySource: st.PolicySource, err: bus.AsError(err)}
		} else {
			n++
			e.disown(ctx, id)
		}
		e.mu.Lock()
		if _, taken := e.projects[id]; taken {
			e.mu.Unlock()
			if p.rootDir != nil {
				p.release()
			}
			continue
		}
		e.mu.Unlock()
		e.install(p)
		if p.err == nil {
			e.resumeWorkflows(ctx, p)
		}
	}
	return n
}

// reopen opens the process side of project id from its agent's state
// and records what changed on disk meanwhile.
func (e *Engine) reopen(ctx context.Context, id string, st agentState) (*project, error) {
	if st.Root == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "its state names no root (was the agent started other than by project open?)")
	}
	dataDir := st.DataDir
	if dataDir == "" {
		dataDir = layout.DefaultDataDir
	}
	root, err := policy.OpenRoot(st.Root)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			root.Close()
		}
	}()
	if root.Path() != st.Root {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "its root %s now resolves to %s (a link was put in its place); close the project and open the folder you mean", st.Root, root.Path())
	}
	pl, err := placeOf(root.Path())
	if err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "project root %s: %v", root.Path(), err)
	}
	if err := e.checkRoot(pl); err != nil {
		return nil, err
	}
	// Projects restored before this one are in places: of two nested
	// roots left open by an older node, the second restored is refused.
	e.mu.Lock()
	err = e.conflict(id, pl)
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	pol, err := policyFromDocument(st.Policy, dataDir)
	if err != nil {
		return nil, err
	}
	// The operator may have narrowed what commands inherit since the
	// project was opened: it reopens, and its commands go without what
	// it may no longer have (the sandbox drops it at each run).
	if err := e.cfg.CommandEnv.Check(pol); err != nil {
		e.log.Warn("project reopened; its commands do not get a variable its policy lists", "project", id, "reason", bus.AsError(err).Message)
	}
	p, err := e.build(id, root, dataDir, pol, st.Policy, st.PolicySource)
	if err != nil {
		return nil, err
	}
	p.place = pl
	snap := p.set.Load()
	// The asset version keeps counting from the stream's: the same set
	// keeps its version, a set changed while the node was down is one on.
	if st.Assets.Version > snap.Version {
		p.versionBase = st.Assets.Version - snap.Version
	}
	if snap.Digest != st.Assets.Digest {
		p.versionBase++
	}
	if err := e.send(ctx, id, TypeStarted, StartedData{Root: p.root, DataDir: dataDir, Policy: st.Policy, PolicySource: st.PolicySource, Protection: policy.Protection().String(), Restart: true}); err != nil {
		p.release()
		return nil, fmt.Errorf("record %s: %w", TypeStarted, err)
	}
	if snap.Digest != st.Assets.Digest {
		if err := e.send(ctx, id, TypeAssetsReloaded, p.assetsData(snap, nil)); err != nil {
			p.release()
			return nil, fmt.Errorf("record %s: %w", TypeAssetsReloaded, err)
		}
	}
	p.reported = snap
	// The policy file may have been edited while the node was down: it
	// is followed as while open (or refused, the stored policy staying).
	change, err := e.reloadPolicy(ctx, p)
	if err != nil {
		e.log.Error("project reopened under its stored policy; a change of its policy file was not recorded (project reload tries again)", "project", id, "err", err)
	}
	e.logPolicy(id, change)
	ok = true
	return p, nil
}

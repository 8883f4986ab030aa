package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects"
)

// newProjects makes the node's project engine, with no project open yet
// (restoreProjects brings them back). Tool outputs over the runner's cap
// go to the node's artifact store, the one conversations use.
func (n *Node) newProjects() error {
	cfg := projects.Config{
		Runtime:     n.rt,
		NodeDataDir: n.cfg.DataDir,
		Artifacts:   views.Artifacts{Dir: ArtifactsDir(n.cfg.DataDir)},
		CommandEnv:  n.secrets.inherit,
		Logger:      n.log,
		Sandbox:     n.cfg.Sandbox,
	}
	if n.cfg.Projects != nil {
		n.cfg.Projects(&cfg)
	}
	e, err := projects.NewEngine(cfg)
	if err != nil {
		close(n.engineReady) // the assistant's calls wait for it no more
		return err
	}
	n.projects = e
	return nil
}

// restoreProjects brings back the projects the last run left open (after
// the runtime's recovery, which restored their agents); the assistant's
// calls, which wait for it, go ahead from then on.
func (n *Node) restoreProjects(ctx context.Context) {
	defer close(n.engineReady)
	if restored := n.projects.Restore(ctx); restored > 0 {
		n.log.Info("projects restored", "open", restored)
	}
}

// Projects is the node's project engine.
func (n *Node) Projects() *projects.Engine { return n.projects }

// projectSignal refuses a signal sent from outside to a project's agent:
// a project's stream is its audit trail, written by the engine alone (its
// opens, reloads, tool calls and closes), so a client could otherwise
// forge entries or close a project it may not. Conversations, below a
// project's id, are not concerned.
func (n *Node) projectSignal(agentID string) error {
	if n.projects == nil || strings.Contains(agentID, "/") {
		return nil
	}
	if _, err := n.projects.Get(agentID); err != nil {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "agent %s is a project: its stream is written by the engine alone; use %s.api.project.<verb> (jido-bus project …)", agentID, n.subjects.Name())
}

// projectBroadcast refuses a broadcast of a project signal type: every
// project's agent routes them, so one publish on <prefix>.signal.project.stopped
// would otherwise close every project.
func (n *Node) projectBroadcast(typ string) error {
	if n.projects == nil || !strings.HasPrefix(typ, projects.TypePrefix) {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "%s is a project signal: project streams are written by the engine alone; use %s.api.project.<verb> (jido-bus project …)", typ, n.subjects.Name())
}

// openProjects opens the projects of Config.Open. A project already open
// on that root (restored from the last run) is left as it is; any other
// refusal stops the start, naming the root.
func (n *Node) openProjects(ctx context.Context, reqs []projects.OpenRequest) error {
	for _, req := range reqs {
		abs, err := filepath.Abs(req.Root)
		if err != nil {
			return fmt.Errorf("open %s: %w", req.Root, err)
		}
		if id := n.ProjectOn(abs); id != "" {
			n.log.Info("project already open", "project", id, "root", abs)
			continue
		}
		req.Root = abs
		if _, err := n.projects.Open(ctx, req); err != nil {
			return fmt.Errorf("open %s: %w", abs, err)
		}
	}
	return nil
}

// ProjectOn returns the id of the open project whose root is root (compared
// as real paths), or "".
func (n *Node) ProjectOn(root string) string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	for _, p := range n.projects.List() {
		if p.Root == real {
			return p.ID
		}
	}
	return ""
}

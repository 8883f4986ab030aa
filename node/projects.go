package node

import (
	"context"

	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// newProjects makes the node's project engine, with no project open yet
// (restoreProjects brings them back). Tool outputs over the runner's cap
// go to the node's artifact store, the one conversations use.
func (n *Node) newProjects() error {
	cfg := projects.Config{
		Runtime:            n.rt,
		NodeDataDir:        n.cfg.DataDir,
		Artifacts:          views.Artifacts{Dir: ArtifactsDir(n.cfg.DataDir)},
		CommandEnv:         n.secrets.inherit,
		Logger:             n.log,
		Sandbox:            n.cfg.Sandbox,
		Log:                n.evlog,
		CheckpointMaxBytes: n.cfg.CheckpointMaxBytes,
		MCPRemotes:         n.cfg.MCPRemotes,
		// delegate is the assistant's (internal/delegate): in the catalog
		// so that the policy rules it and its Safety holds it to a mode.
		Tools: []tools.Tool{assistant.DelegateTool()},
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

// ProjectOn returns the id of the open project whose root is root
// (projects.Engine.ProjectOn), or "".
func (n *Node) ProjectOn(root string) string { return n.projects.ProjectOn(root) }

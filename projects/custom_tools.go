package projects

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// ServiceTool is a tool a service offers over NATS (projects/toolservice)
// to some projects: its Func forwards the call to the service. It runs
// through each project's runner like a built-in: validated against its
// input schema, authorized by the project's policy, its start and outcome
// recorded in the project's stream.
type ServiceTool struct {
	Tool tools.Tool
	// Projects are the ids of the projects it serves; empty serves every
	// project.
	Projects []string
}

// serves reports whether t is offered to project id.
func (t ServiceTool) serves(id string) bool {
	return len(t.Projects) == 0 || slices.Contains(t.Projects, id)
}

// serviceTools are the engine's current service tools; mu serializes
// SetServiceTools so that two updates never interleave their swaps.
type serviceTools struct {
	mu  sync.Mutex
	all []ServiceTool
}

// reservedPrefixes are the names asset tools go by (assets.ToolName) and
// went by (assets.RenamedTool): a custom tool named so could one day be
// shadowed by, or shadow, a project's own skill, command or workflow.
var reservedPrefixes = []string{
	assets.KindCommand + "_", assets.KindSkill + "_", assets.KindWorkflow + "_",
	assets.KindCommand + ".", assets.KindSkill + ".", assets.KindWorkflow + ".", "skill_graph.",
}

// checkCustomName refuses a custom tool name that a built-in has or that
// an asset tool could have.
func (e *Engine) checkCustomName(name string) error {
	if e.builtinC != nil && e.builtinC.Has(name) {
		return fmt.Errorf("tool %s: a built-in tool has that name; pick another name", name)
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("tool %s: names starting with %q are the project assets' tools; pick another name", name, p)
		}
	}
	return nil
}

// checkConfigTools checks Config.Tools at NewEngine: each name free (not a
// built-in's, not an asset tool's) and the whole set a valid catalog
// beside the built-ins (names unique, schemas compiling, a Func each).
func (e *Engine) checkConfigTools() error {
	for _, t := range e.cfg.Tools {
		if err := e.checkCustomName(t.Name); err != nil {
			return fmt.Errorf("projects: Config.Tools: %w", err)
		}
	}
	if _, err := tools.NewCatalog(append(slices.Clone(e.builtins), e.cfg.Tools...)...); err != nil {
		return fmt.Errorf("projects: Config.Tools: %w", err)
	}
	return nil
}

// customTools are the tools project id has beside the built-ins and its
// assets': Config.Tools, its MCP servers' tools, then the service tools
// that serve it.
func (e *Engine) customTools(id string) []tools.Tool {
	ts := append(slices.Clone(e.cfg.Tools), e.mcpTools(id)...)
	e.svc.mu.Lock()
	defer e.svc.mu.Unlock()
	for _, st := range e.svc.all {
		if st.serves(id) {
			ts = append(ts, st.Tool)
		}
	}
	return ts
}

// SetServiceTools replaces the service tools of every project with ts and
// rebuilds the catalog of each open project. A name a built-in, an asset
// tool or Config.Tools has is refused, as is a name offered twice; nothing
// changes then. Calls already running finish with the tool they started
// with.
func (e *Engine) SetServiceTools(ts []ServiceTool) error {
	seen := map[string]bool{}
	for _, t := range e.cfg.Tools {
		seen[t.Name] = true
	}
	for _, st := range ts {
		if err := e.checkCustomName(st.Tool.Name); err != nil {
			return err
		}
		if seen[st.Tool.Name] {
			return fmt.Errorf("tool %s: offered twice (or also a tool of the program); withdraw one", st.Tool.Name)
		}
		seen[st.Tool.Name] = true
	}
	if _, err := tools.NewCatalog(append(slices.Clone(e.builtins), toolsOf(ts)...)...); err != nil {
		return err
	}
	e.svc.mu.Lock()
	e.svc.all = slices.Clone(ts)
	e.svc.mu.Unlock()
	e.mu.Lock()
	open := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		if p != nil && p.err == nil {
			open = append(open, p)
		}
	}
	e.mu.Unlock()
	for _, p := range open {
		if err := e.recatalog(p); err != nil {
			e.log.Error("service tools changed but a project's catalog could not be rebuilt; it keeps its tools", "project", p.id, "err", err)
		}
	}
	return nil
}

// recatalog rebuilds p's catalog from the asset set the stream last heard
// of (p.reported), under p.mu like an asset report.
func (e *Engine) recatalog(p *project) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	snap := p.reported
	if snap == nil {
		snap = p.set.Load()
	}
	cat, err := e.catalog(p.id, snap)
	if err != nil {
		return err
	}
	p.runner.SetCatalog(cat)
	return nil
}

func toolsOf(ts []ServiceTool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, st := range ts {
		out[i] = st.Tool
	}
	return out
}

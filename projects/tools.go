package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/gateway"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Tools returns project id's catalog as its policy lets it be offered
// (denied tools left out), in the form an LLM tool-use API or MCP takes.
func (e *Engine) Tools(id string) ([]tools.Spec, error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	return p.catalog().List(p.box().Policy), nil
}

// CallTool runs one call through project id's runner, the one path every
// tool call takes. Its start and its outcome are entries of the project's
// stream (project.tool.started, then completed or failed), the start
// committed before the tool runs. The error is the call's failure (a
// *tools.Error: denied, outside_root, invalid_args, …) or a failure to
// reach the project (a *bus.Error: not_found).
func (e *Engine) CallTool(ctx context.Context, id string, call tools.ToolCall) (tools.Result, error) {
	if p, err := e.lookup(id); err == nil && p.err == nil {
		if g := p.gone(); g != nil {
			return tools.Result{}, p.refuseGone(&observer{e: e, id: id}, call, g)
		}
	}
	p, err := e.usable(id)
	if err != nil {
		return tools.Result{}, err
	}
	if call.Conversation != "" {
		call.Within = e.worktreeOf(p, call.Conversation)
	}
	return p.runner.Run(ctx, call)
}

// observer records a project's tool calls in its stream. The runner
// calls it on the caller's goroutine, so each entry is committed before
// the runner goes on: the start of a call that may change something
// before the tool runs, every outcome before the caller hears it. The
// start of a call that changes nothing comes with its outcome, and the
// two (and the gateway's record of the request, when a gateway made the
// call) are one append. A commit that fails is the runner's to answer
// (unavailable), so it is returned, never only logged.
type observer struct {
	e  *Engine
	id string
}

func (o *observer) ToolStarted(ev tools.Event) error {
	return o.commit(ev.CallID, entry{TypeToolStarted, toolData(ev)})
}

func (o *observer) ToolCompleted(ev tools.Event) error {
	d := toolData(ev)
	d.Args, d.ArgsBytes = nil, 0
	d.Result, d.Size, d.Artifacts, d.Output = "ok", ev.Size, ev.Artifacts, ev.Output
	return o.outcome(ev, entry{TypeToolCompleted, d})
}

func (o *observer) ToolFailed(ev tools.Event) error {
	d := toolData(ev)
	d.Args, d.ArgsBytes = nil, 0
	if ev.Error != nil {
		d.Result = ev.Error.Type
		// Details (an input schema, a workflow step) stay in the reply.
		d.Error = &tools.Error{Type: ev.Error.Type, Message: ev.Error.Message}
	}
	return o.outcome(ev, entry{TypeToolFailed, d})
}

// outcome commits a call's outcome, after its start when the start
// comes with it and before the gateway's record that rides along.
func (o *observer) outcome(ev tools.Event, out entry) error {
	es := make([]entry, 0, 3)
	if ev.Started != nil {
		es = append(es, entry{TypeToolStarted, toolData(*ev.Started)})
	}
	es = append(es, out)
	switch w := ev.With.(type) {
	case nil:
	case gateway.Request:
		es = append(es, entry{TypeGatewayRequest, w})
	default:
		return fmt.Errorf("outcome of call %s in project %s: %T is not an entry of a project's stream", ev.CallID, o.id, ev.With)
	}
	return o.commit(ev.CallID, es...)
}

func (o *observer) commit(callID string, es ...entry) error {
	// Not the caller's context: a caller that has gone away still leaves
	// the outcome of what it started in the log.
	if err := o.e.sendAll(context.Background(), o.id, es...); err != nil {
		return fmt.Errorf("%s of call %s in project %s's stream: %w", es[len(es)-1].typ, callID, o.id, err)
	}
	return nil
}

// Asset kinds of Assets.
const (
	KindSkill    = "skill"
	KindCommand  = "command"
	KindWorkflow = "workflow"
	KindNote     = "note"
)

// AssetsRequest names what Assets returns: one asset (Kind and Name), a
// kind's list (Kind), or every kind's list (neither).
type AssetsRequest struct {
	Project string `json:"project"`
	Kind    string `json:"kind,omitempty"`
	Name    string `json:"name,omitempty"`
}

// AssetsReply is Assets' answer: Asset for one, the lists otherwise
// (only the kind asked for, or every kind).
type AssetsReply struct {
	Asset     any               `json:"asset,omitempty"`
	Skills    []*assets.Skill   `json:"skills,omitempty"`
	Commands  []*assets.Command `json:"commands,omitempty"`
	Workflows []WorkflowInfo    `json:"workflows,omitempty"`
	Notes     []string          `json:"notes,omitempty"`
	Digest    string            `json:"digest"`
	Version   uint64            `json:"version"`
}

// WorkflowInfo lists a workflow: its name, description, input schema and
// file.
type WorkflowInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Inputs      json.RawMessage `json:"input_schema,omitempty"`
	Source      assets.Source   `json:"source"`
}

// Assets returns one asset or the lists of project id's current set.
func (e *Engine) Assets(req AssetsRequest) (AssetsReply, error) {
	p, err := e.usable(req.Project)
	if err != nil {
		return AssetsReply{}, err
	}
	s := p.set.Load()
	rep := AssetsReply{Digest: s.Digest, Version: s.Version + p.versionBase}
	if req.Name != "" && req.Kind == "" {
		return rep, bus.Errorf(bus.ReasonInvalidRequest, "name %q given without a kind; add \"kind\": skill, command, workflow or note", req.Name)
	}
	switch req.Kind {
	case "", KindSkill, KindCommand, KindWorkflow, KindNote:
	default:
		return rep, bus.Errorf(bus.ReasonInvalidRequest, "kind %q: want skill, command, workflow or note", req.Kind)
	}
	if req.Name != "" {
		a, ok := oneAsset(s, req.Kind, req.Name)
		if !ok {
			return rep, bus.Errorf(bus.ReasonNotFound, "project %s has no %s %q; list them with {\"project\":%q,\"kind\":%q}", req.Project, req.Kind, req.Name, req.Project, req.Kind)
		}
		rep.Asset = a
		return rep, nil
	}
	all := req.Kind == ""
	if all || req.Kind == KindSkill {
		for _, n := range sortedNames(s.Skills) {
			rep.Skills = append(rep.Skills, s.Skills[n])
		}
	}
	if all || req.Kind == KindCommand {
		for _, n := range sortedNames(s.Commands) {
			rep.Commands = append(rep.Commands, s.Commands[n])
		}
	}
	if all || req.Kind == KindWorkflow {
		for _, n := range sortedNames(s.Workflows) {
			rep.Workflows = append(rep.Workflows, workflowInfo(s.Workflows[n]))
		}
	}
	if (all || req.Kind == KindNote) && s.Graph != nil {
		rep.Notes = s.Graph.IDs()
	}
	return rep, nil
}

func oneAsset(s *assets.Snapshot, kind, name string) (any, bool) {
	switch kind {
	case KindSkill:
		a, ok := s.Skills[name]
		return a, ok
	case KindCommand:
		a, ok := s.Commands[name]
		return a, ok
	case KindWorkflow:
		w, ok := s.Workflows[name]
		if !ok {
			return nil, false
		}
		return workflowInfo(w), true
	case KindNote:
		if s.Graph == nil {
			return nil, false
		}
		n, ok := s.Graph.Node(name)
		return n, ok
	}
	return nil, false
}

func workflowInfo(w *assets.Workflow) WorkflowInfo {
	return WorkflowInfo{Name: w.Name, Description: w.Description, Inputs: w.InputSchema(), Source: w.Source}
}

func sortedNames[T any](m map[string]T) []string {
	ns := make([]string, 0, len(m))
	for n := range m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Diagnostics returns every diagnostic of project id's current asset set,
// and its policy file's when the file was refused (policy.yaml), sorted
// by file then line.
func (e *Engine) Diagnostics(id string) ([]assets.Diagnostic, error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	d := append([]assets.Diagnostic{}, p.set.Load().Diagnostics...)
	if pd := p.policyDiagnostic(); pd != nil {
		d = append(d, *pd)
		sort.SliceStable(d, func(i, j int) bool { return d[i].File < d[j].File })
	}
	return d, nil
}

// ToolDetails is Tools with each tool's output schema and Safety (the MCP
// gateway's tools/list).
func (e *Engine) ToolDetails(id string) ([]tools.Detail, error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	return p.catalog().Details(p.box().Policy), nil
}

package mcp

import (
	"context"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Host is what the gateway needs of a node: its open projects, their
// catalogs and assets, the runner, the record of each request and word of
// each change. EngineHost implements it over a project engine (the
// node's: node.(*Node).MCPHost); every method must be safe for
// concurrent use. Errors reaching a project that is not open are a
// *bus.Error of type not_found.
type Host interface {
	// ProjectIDs are the ids of the open projects, sorted.
	ProjectIDs() []string
	// ToolDetails is project's catalog as its policy offers it.
	ToolDetails(project string) ([]tools.Detail, error)
	// CallTool runs one call through project's runner.
	CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error)
	// NeedsApproval reports whether a person must approve tool before it
	// runs in project — its policy asks, or mode (the caller's token's
	// max_mode) is ask and the tool writes or runs — and the reason to
	// show them; in plan mode such a tool is refused (plan_mode).
	NeedsApproval(project, tool, mode string) (bool, string, error)
	// Assets returns one asset or the lists of a project's assets.
	Assets(req projects.AssetsRequest) (projects.AssetsReply, error)
	// CompletePath offers the paths of project that complete prefix, as
	// its list_dir tool would show them (none while the policy denies it),
	// and whether there were more than it gives.
	CompletePath(project, prefix string) ([]string, bool, error)
	// Artifact is the content of a stored tool output ("sha256:<hex>").
	Artifact(id string) ([]byte, error)
	// RecordGatewayRequest appends r to project's stream.
	RecordGatewayRequest(ctx context.Context, project string, r gateway.Request) error
	// OnAssetsChanged calls fn with a project's id when what it offers
	// may have changed; cancel stops the calls.
	OnAssetsChanged(fn func(project string)) (cancel func())
}

// EngineHost is the Host of project engine e, whose tool outputs over the
// runner's cap are stored in artifacts.
func EngineHost(e *projects.Engine, artifacts views.Artifacts) Host {
	return mcpHost{e: e, artifacts: artifacts}
}

type mcpHost struct {
	e         *projects.Engine
	artifacts views.Artifacts
}

func (h mcpHost) ProjectIDs() []string {
	var ids []string
	for _, p := range h.e.List() {
		if p.Status == projects.StatusOpen {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

func (h mcpHost) ToolDetails(project string) ([]tools.Detail, error) { return h.e.ToolDetails(project) }

func (h mcpHost) CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error) {
	return h.e.CallTool(ctx, project, call)
}

func (h mcpHost) NeedsApproval(project, tool, mode string) (bool, string, error) {
	return h.e.NeedsApproval(project, tool, mode)
}

func (h mcpHost) Assets(req projects.AssetsRequest) (projects.AssetsReply, error) {
	return h.e.Assets(req)
}

func (h mcpHost) CompletePath(project, prefix string) ([]string, bool, error) {
	return h.e.CompletePath(project, prefix)
}

func (h mcpHost) Artifact(id string) ([]byte, error) {
	data, err := h.artifacts.Get(id)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonNotFound, "artifact %s: %v", id, err)
	}
	return data, nil
}

func (h mcpHost) RecordGatewayRequest(ctx context.Context, project string, r gateway.Request) error {
	return h.e.RecordGatewayRequest(ctx, project, r)
}

func (h mcpHost) OnAssetsChanged(fn func(project string)) (cancel func()) {
	return h.e.OnAssetsChanged(fn)
}

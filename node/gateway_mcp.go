package node

import (
	"context"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// MCPHost is the node as the MCP gateway sees it: its project engine and
// its artifact store. Call it after Start.
func (n *Node) MCPHost() mcpgw.Host {
	return mcpHost{e: n.projects, artifacts: views.Artifacts{Dir: ArtifactsDir(n.cfg.DataDir)}}
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

func (h mcpHost) NeedsApproval(project, tool string) (bool, string, error) {
	return h.e.NeedsApproval(project, tool)
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

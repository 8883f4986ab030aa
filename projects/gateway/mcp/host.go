package mcp

import (
	"context"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Host is what the gateway needs of a node: its open projects, their
// catalogs and assets, the runner, the record of each request and word of
// each change. The node implements it (node.(*Node).MCPHost) over its
// project engine; every method must be safe for concurrent use. Errors
// reaching a project that is not open are a *bus.Error of type not_found.
type Host interface {
	// ProjectIDs are the ids of the open projects, sorted.
	ProjectIDs() []string
	// ToolDetails is project's catalog as its policy offers it.
	ToolDetails(project string) ([]tools.Detail, error)
	// CallTool runs one call through project's runner.
	CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error)
	// NeedsApproval reports whether project's policy asks a person before
	// tool runs, and the reason to show them.
	NeedsApproval(project, tool string) (bool, string, error)
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

package node

import (
	"github.com/jido-bus/jido-bus/conversation/views"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

// MCPHost is the node as the MCP gateway sees it: its project engine and
// its artifact store. Call it after Start.
func (n *Node) MCPHost() mcpgw.Host {
	return mcpgw.EngineHost(n.projects, views.Artifacts{Dir: ArtifactsDir(n.cfg.DataDir)})
}

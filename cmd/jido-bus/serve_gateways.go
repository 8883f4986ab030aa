package main

import (
	"log/slog"

	"github.com/jido-bus/jido-bus/node"
)

// logGateways says, once the node runs, where an MCP client and an A2A
// agent reach each open project: the URLs a user pastes into a client,
// so that nobody has to work them out from the listener's address. The
// A2A URL ends in '/': an A2A client resolves .well-known/agent-card.json
// against it, and without the slash that is /a2a/.well-known/…, a 404.
func logGateways(log *slog.Logger, n *node.Node) {
	base := n.HTTPURL()
	if base == "" {
		return
	}
	log.Info("gateways: MCP for every open project (tools named <project>.<tool>)", "mcp", base+"/mcp")
	engine := n.Projects()
	if engine == nil {
		return
	}
	for _, p := range engine.List() {
		log.Info("gateways of project "+p.ID, "project", p.ID,
			"mcp", base+"/mcp/"+p.ID,
			"a2a", base+"/a2a/"+p.ID+"/",
			"a2a_card", base+"/a2a/"+p.ID+"/.well-known/agent-card.json")
	}
}

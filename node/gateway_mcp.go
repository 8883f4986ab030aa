package node

import (
	"context"
	"iter"

	"github.com/jido-bus/jido-bus/conversation/views"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

// MCPHost is the node as the MCP gateway sees it: its project engine, its
// artifact store, and its conversations (the chat tool), through the same
// paths as the A2A gateway's. Call it after Start.
func (n *Node) MCPHost() mcpgw.Host {
	return mcpHost{Host: mcpgw.EngineHost(n.projects, views.Artifacts{Dir: ArtifactsDir(n.cfg.DataDir)}), conv: a2aHost{n}}
}

// mcpHost adds the node's conversations (mcpgw.Conversations) to the
// engine's host.
type mcpHost struct {
	mcpgw.Host
	conv a2aHost
}

func (h mcpHost) StartConversation(ctx context.Context, project, conv, owner, mode string) error {
	return h.conv.StartConversation(ctx, project, conv, owner, mode)
}

func (h mcpHost) SendMessage(ctx context.Context, key, text string) (string, error) {
	return h.conv.SendMessage(ctx, key, text)
}

func (h mcpHost) ConversationEvents(ctx context.Context, key string) ([]*views.Event, error) {
	return h.conv.ConversationEvents(ctx, key)
}

func (h mcpHost) FollowConversation(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error) {
	return h.conv.FollowConversation(ctx, key, after)
}

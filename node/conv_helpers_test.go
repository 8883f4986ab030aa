package node

import (
	"context"

	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// convSend and convCancel hand body, a conv.send or conv.cancel request
// as JSON, to the node's conversations the way the API does (the same
// decoding, unknown fields refused).
func (n *Node) convSend(ctx context.Context, body []byte) (any, error) {
	return natsbus.Typed(n.conv.Send)(ctx, body)
}

func (n *Node) convCancel(ctx context.Context, body []byte) (any, error) {
	return natsbus.Typed(n.conv.Cancel)(ctx, body)
}

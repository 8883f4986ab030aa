package projects

import (
	"context"

	"github.com/jido-bus/jido-bus/projects/gateway"
)

// TypeGatewayRequest is the entry a protocol gateway (MCP, A2A) leaves in
// a project's stream for each request that reached the project: who, what,
// and the result.
const TypeGatewayRequest = "project.gateway.request"

// RecordGatewayRequest appends r to project id's stream (and emits it on
// <prefix>.emit.<id>.project.gateway.request), so the project's audit
// trail has every gateway request beside the tool calls it made.
func (e *Engine) RecordGatewayRequest(ctx context.Context, id string, r gateway.Request) error {
	if _, err := e.lookup(id); err != nil {
		return err
	}
	return e.send(ctx, id, TypeGatewayRequest, r)
}

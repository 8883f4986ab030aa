package node

import (
	"context"
	"time"
)

// maxHookResponse is how long an operator has to answer a hook request
// it received (the reply permission nats-server grants per request); a
// project's hooks.timeout_ms is at most five minutes.
const maxHookResponse = 6 * time.Minute

// RunHook runs a project's local command hook under its sandbox.
func (h projectHost) RunHook(ctx context.Context, project string, argv []string, stdin []byte, timeout time.Duration) ([]byte, []byte, int, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	return e.RunHook(ctx, project, argv, stdin, timeout)
}

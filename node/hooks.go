package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/projects/assistant"
)

// maxHookResponse is how long an operator has to answer a hook request
// it received (the reply permission nats-server grants per request); a
// project's hooks.timeout_ms is at most five minutes.
const maxHookResponse = 6 * time.Minute

// askHook asks project's hook at event on the bus: a request on
// <prefix>.hook.<project>.<event>, answered by whichever subscriber (or
// queue group member) replies first. No responder, or none within
// timeout, wraps assistant.ErrNoHook.
func (n *Node) askHook(ctx context.Context, project, event string, req []byte, timeout time.Duration) ([]byte, string, error) {
	subject := n.subjects.Hook(project, event)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := n.conn.nc.RequestWithContext(cctx, subject, req)
	switch {
	case err == nil:
		return m.Data, subject, nil
	case errors.Is(err, nats.ErrNoResponders):
		return nil, subject, fmt.Errorf("%w: no hook service subscribes to %s", assistant.ErrNoHook, subject)
	case ctx.Err() != nil:
		return nil, subject, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, subject, fmt.Errorf("%w: no hook service answered on %s within hooks.timeout_ms (%s)", assistant.ErrNoHook, subject, timeout)
	}
	return nil, subject, fmt.Errorf("%w: asking %s: %v", assistant.ErrNoHook, subject, err)
}

// RunHook runs a project's local command hook under its sandbox.
func (h projectHost) RunHook(ctx context.Context, project string, argv []string, stdin []byte, timeout time.Duration) ([]byte, []byte, int, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	return e.RunHook(ctx, project, argv, stdin, timeout)
}

package assistant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// NATSHooks asks a project's hooks over NATS: project's hook at event on the bus: a request on
// <prefix>.hook.<project>.<event>, answered by whichever subscriber (or
// queue group member) replies first. No responder, or none within
// timeout, wraps ErrNoHook.
func NATSHooks(nc *nats.Conn, subjects bus.Subjects) HookAsker {
	return func(ctx context.Context, project, event string, req []byte, timeout time.Duration) ([]byte, string, error) {
		return askHook(ctx, nc, subjects.Hook(project, event), req, timeout)
	}
}

func askHook(ctx context.Context, nc *nats.Conn, subject string, req []byte, timeout time.Duration) ([]byte, string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := nc.RequestWithContext(cctx, subject, req)
	switch {
	case err == nil:
		return m.Data, subject, nil
	case errors.Is(err, nats.ErrNoResponders):
		return nil, subject, fmt.Errorf("%w: no hook service subscribes to %s", ErrNoHook, subject)
	case ctx.Err() != nil:
		return nil, subject, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, subject, fmt.Errorf("%w: no hook service answered on %s within hooks.timeout_ms (%s)", ErrNoHook, subject, timeout)
	}
	return nil, subject, fmt.Errorf("%w: asking %s: %v", ErrNoHook, subject, err)
}

package projects

import (
	"context"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Awaited is an engine as the assistant sees it (assistant.Host) when the
// assistant starts before the engine does: each call waits for Ready,
// then asks the engine Engine returns (nil: the node has none). The
// assistant calls it from its own goroutines only.
type Awaited struct {
	Ready  <-chan struct{}
	Engine func() *Engine
}

func (h Awaited) engine(ctx context.Context) (*Engine, error) {
	select {
	case <-h.Ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e := h.Engine()
	if e == nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "the node has no project engine")
	}
	return e, nil
}

func (h Awaited) Tools(ctx context.Context, project string) ([]tools.Spec, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return nil, err
	}
	return e.Tools(project)
}

func (h Awaited) CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	return e.CallTool(ctx, project, call)
}

func (h Awaited) NeedsApproval(ctx context.Context, project, tool, mode string) (bool, string, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return false, "", err
	}
	return e.NeedsApproval(project, tool, mode)
}

func (h Awaited) Settings(ctx context.Context, project string) (assistant.Settings, string, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return assistant.Settings{}, "", err
	}
	s, root, err := e.Settings(project)
	if err != nil && bus.ErrorType(err) == bus.ReasonNotFound {
		err = fmt.Errorf("%w (a conversation's model comes from its project's .jido/config.yaml; open the project: jido-bus project open PATH --id %s)", err, project)
	}
	return s, root, err
}

// RunHook runs a project's local command hook under its sandbox.
func (h Awaited) RunHook(ctx context.Context, project string, argv []string, stdin []byte, timeout time.Duration) ([]byte, []byte, int, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	return e.RunHook(ctx, project, argv, stdin, timeout)
}

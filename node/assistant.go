package node

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/agents"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// Directives returns the directive codec a node runs with: the built-in
// kinds and the conversation loop's (LLM calls, tool runs), so that
// replaying a conversation's stream reads them back.
func Directives() (*agents.DirectiveCodec, error) {
	c := agents.NewDirectiveCodec()
	if err := conversation.RegisterDirectives(c); err != nil {
		return nil, err
	}
	return c, nil
}

// newAssistant makes the executors of the conversation loop. They reach
// the project engine through projectHost, since the engine starts after
// the runtime's recovery, which may already run them.
func (n *Node) newAssistant() *assistant.Assistant {
	n.engineReady = make(chan struct{})
	cfg := assistant.Config{
		Host:      projectHost{n},
		Log:       n.evlog,
		Publish:   n.publishTransient,
		Logger:    n.log.With("component", "assistant"),
		Limits:    n.cfg.Limits,
		Providers: n.secrets.providers,
		Secrets:   n.secrets.set,
		Spent:     n.metrics.spend.Spent,
		AskHook:   assistant.NATSHooks(n.conn.NC, n.subjects),
		Delegate:  (&delegations{n: n, working: map[string]int{}}).run,
		RunHook:   projectHost{n}.RunHook,
		// The operator's default window for models without one.
		ContextWindow: n.cfg.ContextWindow,
	}
	if n.cfg.Assistant != nil {
		n.cfg.Assistant(&cfg)
	}
	return assistant.New(cfg)
}

// publishTransient publishes a transient conversation event (an
// assistant delta) on the conversation's emit subject. With the emit
// stream it carries Nats-TTL: the stream keeps it emitstream.DeltaTTL only, for
// consumers reading live, and never lets deltas push committed emits out.
func (n *Node) publishTransient(key string, sig bus.Signal) error {
	subject := n.subjects.Emit(key, sig.Type())
	msg, err := codec.Encode(subject, &sig, codec.Binary)
	if err != nil {
		return fmt.Errorf("publish %s to %s: %w", sig.ID(), subject, err)
	}
	if n.emitStream != "" {
		msg.Header[jetstream.MsgTTLHeader] = []string{emitstream.DeltaTTL.String()}
	}
	if err := n.conn.NC.PublishMsg(msg); err != nil {
		return fmt.Errorf("publish %s to %s: %w", sig.ID(), subject, err)
	}
	return nil
}

// projectHost is the assistant's view of the node's project engine. Each
// call waits for the engine to have started; the assistant calls it from
// its own goroutines only.
type projectHost struct{ n *Node }

func (h projectHost) engine(ctx context.Context) (*projects.Engine, error) {
	select {
	case <-h.n.engineReady:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if h.n.projects == nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "the node has no project engine")
	}
	return h.n.projects, nil
}

func (h projectHost) Tools(ctx context.Context, project string) ([]tools.Spec, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return nil, err
	}
	return e.Tools(project)
}

func (h projectHost) CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	return e.CallTool(ctx, project, call)
}

func (h projectHost) NeedsApproval(ctx context.Context, project, tool, mode string) (bool, string, error) {
	e, err := h.engine(ctx)
	if err != nil {
		return false, "", err
	}
	return e.NeedsApproval(project, tool, mode)
}

func (h projectHost) Settings(ctx context.Context, project string) (assistant.Settings, string, error) {
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

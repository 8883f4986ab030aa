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
		Host:      n.host(),
		Log:       n.evlog,
		Publish:   n.publishTransient,
		Logger:    n.log.With("component", "assistant"),
		Limits:    n.cfg.Limits,
		Providers: n.secrets.providers,
		Secrets:   n.secrets.set,
		Spent:     n.metrics.spend.Spent,
		AskHook:   assistant.NATSHooks(n.conn.NC, n.subjects),
		Delegate: func(ctx context.Context, c assistant.DelegateCall) assistant.DelegateResult {
			return n.delegations.Run(ctx, c)
		},
		RunHook: n.host().RunHook,
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

// host is the project engine as the assistant sees it: the assistant
// starts before the engine, so each call waits for it.
func (n *Node) host() projects.Awaited {
	return projects.Awaited{Ready: n.engineReady, Engine: func() *projects.Engine { return n.projects }}
}

package dispatch

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// natsTarget publishes signals with the codec, and the Position of the
// emit when the context carries one (WithPosition), and on the agent's own
// emit subject its Nats-Msg-Id (MsgID). Publishing is core NATS:
// Dispatch returns when the message is in the connection's buffer, which is
// as far as core NATS confirms anything; a subscriber that is not listening
// misses it.
type natsTarget struct {
	conn     *nats.Conn
	subjects bus.Subjects
	subject  string // fixed subject, or "" for the default emit subject
	mode     codec.Mode
}

func newNATSTarget(cfg Config, env Env) *natsTarget {
	mode, _ := parseMode(cfg.Mode) // cfg is valid
	return &natsTarget{conn: env.Conn, subjects: env.Subjects, subject: cfg.Subject, mode: mode}
}

func (n *natsTarget) Dispatch(ctx context.Context, from string, s *bus.Signal) error {
	// PublishMsg takes no context; this is the one point where the caller's
	// cancellation can still keep the message from going out.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dispatch signal %s to NATS: %w", s.ID(), err)
	}
	// The type and the agent id become subject tokens: an invalid one would
	// make an invalid subject, which the server refuses only asynchronously.
	if err := bus.ValidateSignal(s, bus.Limits{MaxDataBytes: -1}); err != nil {
		return fmt.Errorf("dispatch signal %s to NATS: %w", s.ID(), err)
	}
	subject, own := n.subject, n.subject == ""
	if own {
		if err := bus.ValidateAgentID(from); err != nil {
			return fmt.Errorf("dispatch signal %s to NATS: emitting agent: %w", s.ID(), err)
		}
		subject = n.subjects.Emit(from, s.Type())
	}
	msg, err := codec.Encode(subject, s, n.mode)
	if err != nil {
		return fmt.Errorf("dispatch signal %s to NATS subject %s: %w", s.ID(), subject, err)
	}
	if p, ok := PositionFrom(ctx); ok {
		p.setHeaders(msg.Header)
	}
	if own {
		// The node's emit stream captures the agent's own emit subjects
		// and stores a re-run's copy once. Not on a subject of the
		// agent's choosing: one signal sent to two of them would be
		// dropped as a duplicate by a stream that captures both.
		msg.Header[HeaderMsgID] = []string{MsgID(s)}
	}
	if err := n.conn.PublishMsg(msg); err != nil {
		return fmt.Errorf("dispatch signal %s to NATS subject %s: %w", s.ID(), subject, err)
	}
	return nil
}

package dispatch

import (
	"context"
	"fmt"
	"sync"

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

// messages are the codec.Messages Dispatch encodes into: every signal an
// agent emits is published here, and a message, its header map and its
// values' array made anew for each were most of the emit's allocations.
// PublishMsg has copied a message into the connection's buffer when it
// returns, so the message goes back to the pool then.
var messages = sync.Pool{New: func() any { return new(codec.Message) }}

// emitText is the room on the stack for what Dispatch formats for one
// emit — the subject, the position's numbers and the Nats-Msg-Id — before
// it becomes one string; longer text (long ids) moves to the heap.
const emitText = 256

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
	}
	p, hasPos := PositionFrom(ctx)
	// What this emit adds to the signal's headers is formatted into one
	// buffer and made one string, whose parts are the header values:
	// one allocation instead of one for each number, the quoted ids and
	// their concatenation, and the subject.
	var stack [emitText]byte
	text := stack[:0]
	var subjectEnd, seqEnd, globalEnd, indexEnd int
	if own {
		text = n.subjects.AppendEmit(text, from, s.Type())
		subjectEnd = len(text)
	}
	if hasPos {
		text, seqEnd, globalEnd, indexEnd = p.appendHeaders(text)
	}
	if own {
		// The node's emit stream captures the agent's own emit subjects
		// and stores a re-run's copy once. Not on a subject of the
		// agent's choosing: one signal sent to two of them would be
		// dropped as a duplicate by a stream that captures both.
		text = appendMsgID(text, s)
	}
	str := string(text)
	if own {
		subject = str[:subjectEnd]
	}
	m := messages.Get().(*codec.Message)
	defer func() {
		m.Reset()
		messages.Put(m)
	}()
	if err := m.EncodeInto(subject, s, n.mode); err != nil {
		return fmt.Errorf("dispatch signal %s to NATS subject %s: %w", s.ID(), subject, err)
	}
	if hasPos {
		m.Set(HeaderStream, p.Stream)
		start := subjectEnd
		m.Set(HeaderSeq, str[start:seqEnd])
		m.Set(HeaderGlobalSeq, str[seqEnd:globalEnd])
		m.Set(HeaderEmitIndex, str[globalEnd:indexEnd])
	}
	if own {
		m.Set(HeaderMsgID, str[max(subjectEnd, indexEnd):])
	}
	if err := n.conn.PublishMsg(&m.Msg); err != nil {
		return fmt.Errorf("dispatch signal %s to NATS subject %s: %w", s.ID(), subject, err)
	}
	return nil
}

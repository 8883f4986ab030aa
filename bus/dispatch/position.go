package dispatch

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
)

// Headers a nats target adds to an emit whose Dispatch context carries a
// Position (WithPosition), beside its CloudEvents attributes. Jido-Stream
// and Jido-Seq are the names conversation events published by the node
// carry, with the same meaning: the stream, and a stream sequence a
// reader of that stream compares with the last one it read.
const (
	// HeaderStream is the emitting agent's log stream, agent/<id>.
	HeaderStream = "Jido-Stream"
	// HeaderSeq is the stream sequence of the decision (the agent's
	// jido.agent.cmd record) that emitted the signal, in decimal.
	HeaderSeq = "Jido-Seq"
	// HeaderGlobalSeq is the global sequence of that decision, in decimal.
	HeaderGlobalSeq = "Jido-Global-Seq"
	// HeaderEmitIndex is the emit's index in the decision's directive
	// list, in decimal. Within a stream, (Jido-Seq, Jido-Emit-Index)
	// orders emits as the agent made them.
	HeaderEmitIndex = "Jido-Emit-Index"
)

// Position is where the decision that emitted a signal sits in the log,
// and which of its directives the emit is. It is fixed by the commit, so
// an emit published again after a crash carries the same Position.
type Position struct {
	Stream    string // the emitting agent's stream
	Seq       uint64 // stream sequence of the decision
	GlobalSeq uint64 // global sequence of the decision
	Index     int    // the emit's index in the decision's directives
}

type positionKey struct{}

// positionCtx is a context carrying a Position: what context.WithValue
// would make, in one allocation instead of two (the value context, and
// the Position boxed in its interface). The runtime derives one for
// every emit.
type positionCtx struct {
	context.Context
	p Position
}

func (c *positionCtx) Value(key any) any {
	if _, ok := key.(positionKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// WithPosition returns ctx carrying p, for a Dispatch of the emit p names:
// a nats target then sends p in the headers above. A context carries the
// position of one emit, so the runtime derives one per emit; signals
// dispatched without one (lifecycle signals, an executor's own emits)
// carry no position headers.
func WithPosition(ctx context.Context, p Position) context.Context {
	return &positionCtx{Context: ctx, p: p}
}

// PositionFrom returns the Position ctx carries, if any.
func PositionFrom(ctx context.Context) (Position, bool) {
	if c, ok := ctx.Value(positionKey{}).(*positionCtx); ok {
		return c.p, true
	}
	return Position{}, false
}

// appendHeaders appends p's Jido-Seq, Jido-Global-Seq and Jido-Emit-Index
// values to dst, one after the other, and returns where each ends.
func (p Position) appendHeaders(dst []byte) (_ []byte, seqEnd, globalEnd, indexEnd int) {
	dst = strconv.AppendUint(dst, p.Seq, 10)
	seqEnd = len(dst)
	dst = strconv.AppendUint(dst, p.GlobalSeq, 10)
	globalEnd = len(dst)
	dst = strconv.AppendInt(dst, int64(p.Index), 10)
	return dst, seqEnd, globalEnd, len(dst)
}

// PositionOf reads the Position from the headers of an emit; ok is false
// when they name none (a lifecycle signal, a conversation event, a
// message from elsewhere). Headers that name one badly are an error.
func PositionOf(h nats.Header) (p Position, ok bool, err error) {
	seq, index := h.Get(HeaderSeq), h.Get(HeaderEmitIndex)
	if index == "" {
		return Position{}, false, nil
	}
	p.Stream = h.Get(HeaderStream)
	if p.Seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
		return Position{}, false, fmt.Errorf("header %s %q: %w", HeaderSeq, seq, err)
	}
	g := h.Get(HeaderGlobalSeq)
	if p.GlobalSeq, err = strconv.ParseUint(g, 10, 64); err != nil {
		return Position{}, false, fmt.Errorf("header %s %q: %w", HeaderGlobalSeq, g, err)
	}
	if p.Index, err = strconv.Atoi(index); err != nil || p.Index < 0 {
		return Position{}, false, fmt.Errorf("header %s %q: want a directive index, 0 or more", HeaderEmitIndex, index)
	}
	return p, true, nil
}

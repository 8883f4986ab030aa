package main

import (
	"context"
	"fmt"
	"iter"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/node"
)

// A position in a stream is its sequence, the one number every command
// shows (log show's SEQ, conv show's first column, Jido-Seq) and takes
// (conv show --at, conv fork --at, log replay --to and --diff). An
// agent's version (how many signals it decided) is not one: it restarts
// at each incarnation, and a conversation's user never sees it.

// replayed is a replay's result and the last entry it read.
type replayed struct {
	runtime.ReplayResult
	Seq uint64 `json:"seq"`
}

// replayer replays one stream up to a stream sequence, as often as asked.
type replayer struct {
	ctx    context.Context
	b      logBackend
	stream string
	verify bool
	types  *agents.Registry
	codec  *agents.DirectiveCodec
	head   uint64 // the stream's last sequence
}

func newReplayer(ctx context.Context, b logBackend, stream string, verify bool) (*replayer, error) {
	types, err := node.AgentTypes(nil)
	if err != nil {
		return nil, err
	}
	codec, err := node.Directives()
	if err != nil {
		return nil, err
	}
	last, err := b.Read(ctx, logapi.ReadRequest{Stream: stream, Backward: true, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", stream, readError(stream, 0, err))
	}
	r := &replayer{ctx: ctx, b: b, stream: stream, verify: verify, types: types, codec: codec}
	if len(last.Entries) > 0 {
		r.head = last.Entries[0].Seq
	}
	return r, nil
}

// replay decides the stream's signals again through the entry at seq
// (0: all of it).
func (r *replayer) replay(seq uint64) (replayed, error) {
	if seq > r.head {
		return replayed{}, fmt.Errorf("replay %s: seq %d is past the end of %s, seq %d (its last entry); ask for %d or less", r.stream, seq, r.stream, r.head, r.head)
	}
	var out replayed
	entries := through(pages(r.ctx, r.b, r.stream), seq, &out.Seq)
	res, err := runtime.Replay(entries, r.types, r.codec, runtime.ReplayOptions{Verify: r.verify})
	if err != nil {
		return out, fmt.Errorf("replay %s: %w", r.stream, err)
	}
	out.ReplayResult = res
	return out, nil
}

// through yields entries up to the one at seq (all when seq is 0) and,
// when that one is a signal, the cmd record after it, which holds its
// decision: "after seq N" includes the signal at N decided, as conv
// show --at N includes the event at N. last is set to the sequence of
// the last entry yielded up to seq.
func through(entries iter.Seq2[eventlog.Entry, error], seq uint64, last *uint64) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		pendingSignal := false
		for e, err := range entries {
			if err != nil {
				yield(e, err)
				return
			}
			if seq != 0 && e.Seq > seq && (!pendingSignal || e.Event.Type() != runtime.TypeCmd) {
				return
			}
			if seq != 0 && e.Seq > seq {
				yield(e, nil) // the cmd record of the signal at seq
				return
			}
			*last = e.Seq
			if !yield(e, nil) {
				return
			}
			switch e.Event.Type() {
			case runtime.TypeStarted, runtime.TypeStopped, runtime.TypeCmd, runtime.TypeEffects:
				pendingSignal = false
			default:
				pendingSignal = true
			}
		}
	}
}

package jslog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// ErrCrossPartition: an AppendMulti named streams of different partitions,
// which JetStream cannot write atomically (an atomic batch stays in one
// stream). Streams of one root agent share a partition (see RootID).
var ErrCrossPartition = errors.New("append across partitions")

// maxAttempts bounds how often one append reads what it missed and tries
// again after its fence was refused or its publish was a duplicate.
const maxAttempts = 10

// Append appends events to stream as one message, if the stream's version
// matches expected; it returns once JetStream acknowledged the message,
// that is once a quorum of the stream's replicas stored it.
//
// As in the Pebble log, events whose source and id the stream already
// holds are not written again (their Position is the existing one, with
// Duplicate set), and expected is checked only when at least one event is
// new. A version mismatch is an *eventlog.AppendError (ErrWrongVersion);
// that is also how a writer learns that another wrote to the stream since
// it last looked (its fence was refused). An invalid stream or event is a
// *bus.Error; nothing is written in either case. Any other error (a
// timeout, a lost connection) leaves it unknown whether the message was
// stored: retry the same append — it is then a duplicate if it was.
func (l *Log) Append(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error) {
	res, err := l.AppendMulti(ctx, []eventlog.StreamAppend{{Stream: stream, Expected: expected, Events: events}})
	if err != nil {
		return eventlog.AppendResult{}, err
	}
	return res[0], nil
}

// AppendMulti appends to several streams all or nothing, each part with
// its own expected version; later parts of one stream see the earlier
// ones. The streams must share a partition (else ErrCrossPartition). The
// parts of one stream become one message; the messages of several streams
// are one JetStream atomic batch. See Append for duplicates and errors;
// StreamAppend.AllNew makes a duplicate an *eventlog.DuplicateError.
func (l *Log) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	streams, err := l.validate(parts)
	if err != nil {
		return nil, err
	}
	states := l.cache.acquireAll(l, streams)
	defer func() {
		for _, st := range states {
			l.cache.release(st)
		}
	}()
	for _, st := range states {
		if !st.loaded {
			if err := l.sync(ctx, st); err != nil {
				return nil, err
			}
		}
	}
	byName := make(map[string]*streamState, len(states))
	for _, st := range states {
		byName[st.name] = st
	}
	backoff := time.Millisecond
	for range maxAttempts {
		p, err := plan(parts, byName)
		if err != nil {
			return nil, err
		}
		if len(p.msgs) == 0 {
			return p.results, nil
		}
		seqs, outcome, err := l.publish(ctx, p.msgs)
		switch outcome {
		case published:
			return p.commit(seqs), nil
		case fenced, duplicate:
			if outcome == fenced {
				l.stats.fenced.Add(1)
			} else {
				l.stats.duplicates.Add(1)
			}
			// Another writer appended, or this append was stored by an
			// attempt whose acknowledgement was lost: read what the
			// subjects hold now and decide again.
			moved := false
			for _, m := range p.msgs {
				if err := l.sync(ctx, m.st); err != nil {
					return nil, err
				}
				moved = moved || m.st.lastSeq != m.fence
			}
			if !moved {
				// Refused for a write to the subject still in flight
				// (JetStream lets one through at a time): nothing to read
				// yet, so give it a moment to commit or fail.
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				backoff = min(2*backoff, 100*time.Millisecond)
			}
		default:
			return nil, err
		}
	}
	return nil, fmt.Errorf("append to %s: the stream changed under each of %d attempts; retry", streams[0], maxAttempts)
}

// validate checks every part as the Pebble log does and that they share a
// partition; it returns the distinct stream names in order.
func (l *Log) validate(parts []eventlog.StreamAppend) ([]string, error) {
	if len(parts) == 0 {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "append: no streams")
	}
	total := 0
	for _, p := range parts {
		total += len(p.Events)
	}
	if total > l.opts.MaxAppendEvents {
		return nil, bus.Errorf(bus.ReasonTooLarge, "append of %d events: the limit is %d per call", total, l.opts.MaxAppendEvents)
	}
	var streams []string
	seen := map[string]bool{}
	first := -1
	for _, p := range parts {
		if err := eventlog.ValidateStream(p.Stream); err != nil {
			return nil, err
		}
		if len(p.Events) == 0 {
			return nil, bus.Errorf(bus.ReasonInvalidRequest, "append to %s: no events", p.Stream)
		}
		for j := range p.Events {
			ev := &p.Events[j]
			if err := bus.ValidateSignal(ev, l.opts.Limits); err != nil {
				return nil, fmt.Errorf("append to %s: event %d (id %q): %w", p.Stream, j, ev.ID(), err)
			}
		}
		part := Partition(p.Stream, l.opts.Partitions)
		if first < 0 {
			first = part
		} else if part != first {
			return nil, fmt.Errorf("append to %s (partition %d) and %s (partition %d): %w; keep a multi-stream append under one root agent",
				parts[0].Stream, first, p.Stream, part, ErrCrossPartition)
		}
		if !seen[p.Stream] {
			seen[p.Stream] = true
			streams = append(streams, p.Stream)
		}
	}
	return streams, nil
}

// outMsg is one message to publish: the new events of one stream.
type outMsg struct {
	st      *streamState
	events  []bus.Signal
	refs    []eventRef
	first   uint64 // version of its first event
	fence   uint64 // the subject's last sequence as st knows it
	pending []*eventlog.Position
}

// appendPlan is what an attempt would write and answer.
type appendPlan struct {
	msgs    []*outMsg
	results []eventlog.AppendResult
}

// plan decides an attempt from the states: which events are new, the
// versions they take and whether each part's expectation holds.
func plan(parts []eventlog.StreamAppend, states map[string]*streamState) (*appendPlan, error) {
	p := &appendPlan{results: make([]eventlog.AppendResult, len(parts))}
	byStream := map[string]*outMsg{}
	type inCall struct {
		msg   *outMsg
		index int // the event's index in msg.events
	}
	written := map[string]map[string]inCall{} // stream → idem key → where in this call
	heads := map[string]uint64{}
	for name, st := range states {
		heads[name] = st.version
		written[name] = map[string]inCall{}
	}
	for i, part := range parts {
		st := states[part.Stream]
		res := eventlog.AppendResult{Stream: part.Stream, Positions: make([]eventlog.Position, len(part.Events))}
		head := heads[part.Stream]
		checked := false
		for j := range part.Events {
			ev := &part.Events[j]
			k := idemKey(ev.Source(), ev.ID())
			if pos, ok := st.ids[k]; ok {
				if part.AllNew {
					return nil, &eventlog.DuplicateError{Stream: part.Stream, Index: j, ID: ev.ID(), Existing: pos}
				}
				res.Positions[j] = pos
				continue
			}
			if w, ok := written[part.Stream][k]; ok {
				pos := eventlog.Position{Seq: w.msg.first + uint64(w.index), Duplicate: true}
				if part.AllNew {
					return nil, &eventlog.DuplicateError{Stream: part.Stream, Index: j, ID: ev.ID(), Existing: pos}
				}
				res.Positions[j] = pos
				w.msg.pending = append(w.msg.pending, &res.Positions[j])
				continue
			}
			// The expected version holds against the stream as this part
			// finds it, and matters only when the part writes something.
			if !checked {
				if !matches(part.Expected, head) {
					return nil, &eventlog.AppendError{Stream: part.Stream, Expected: part.Expected, Actual: head}
				}
				checked = true
			}
			m := byStream[part.Stream]
			if m == nil {
				m = &outMsg{st: st, first: st.version + 1, fence: st.lastSeq}
				byStream[part.Stream] = m
				p.msgs = append(p.msgs, m)
			}
			head++
			res.Positions[j] = eventlog.Position{Seq: head}
			written[part.Stream][k] = inCall{msg: m, index: len(m.events)}
			m.events = append(m.events, *ev)
			m.refs = append(m.refs, eventRef{ID: ev.ID(), Source: ev.Source()})
			m.pending = append(m.pending, &res.Positions[j])
		}
		heads[part.Stream] = head
		res.Version = head
		p.results[i] = res
	}
	return p, nil
}

// commit records the published messages at their sequences in the states
// and the results.
func (p *appendPlan) commit(seqs []uint64) []eventlog.AppendResult {
	for i, m := range p.msgs {
		m.st.apply(seqs[i], m.first, m.refs)
		for _, pos := range m.pending {
			pos.GlobalSeq = seqs[i]
		}
	}
	return p.results
}

// matches is eventlog.ExpectedVersion's test of a stream's version.
func matches(e eventlog.ExpectedVersion, head uint64) bool {
	switch {
	case e == eventlog.AnyVersion:
		return true
	case e == eventlog.NoStream:
		return head == 0
	default:
		return e > 0 && uint64(e) == head
	}
}

// msgID is the Nats-Msg-Id of a message: its stream and its first event's
// source and id, so that the same append retried is the same id.
func msgID(stream string, first eventRef) string {
	return stream + " " + strconv.Quote(first.Source) + " " + strconv.Quote(first.ID)
}

package eventlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/jido-bus/jido-bus/bus"
)

// StreamAppend is the part of an AppendMulti call that goes to one stream.
// The Log does not keep or modify Events.
type StreamAppend struct {
	Stream   string
	Expected ExpectedVersion
	Events   []bus.Signal
	// AllNew makes a duplicate an error instead of a no-op: when the
	// stream (or this append) already holds one of Events, the call fails
	// with a *DuplicateError and writes nothing. A writer that derives
	// each event from the ones before it in the same append — an agent
	// committing several decisions at once — uses it, since skipping one
	// would leave the later ones derived from something not written.
	AllNew bool
}

// Position is where an appended event is in the log.
type Position struct {
	Seq       uint64 `json:"seq"`
	GlobalSeq uint64 `json:"global_seq"`
	// Duplicate is true when the stream already held an event with the
	// same source and id; Seq and GlobalSeq are then that event's, and
	// nothing was written for this one.
	Duplicate bool `json:"duplicate,omitempty"`
}

// AppendResult reports the outcome of an append to one stream.
type AppendResult struct {
	Stream    string     `json:"stream"`
	Positions []Position `json:"positions"` // one per event, in order
	Version   uint64     `json:"version"`   // the stream's version afterwards
}

// Append appends events to stream in one atomic batch, if the stream's
// version matches expected. It returns after the batch is synced to disk;
// concurrent appends share one fsync.
//
// Events whose source and id are already in the stream are not written
// again: their Position reports the existing entry with Duplicate set, and
// the expected version is only checked when at least one event is new.
//
// Errors: an invalid stream name (*bus.Error of type ReasonInvalidStream),
// an invalid or oversize event (*bus.Error with a bus Reason, naming the
// event's index and id), a version mismatch (*AppendError, wrapping
// ErrWrongVersion); in each case nothing is written. ErrClosed and
// ErrFailed report a Log that cannot write.
func (l *Log) Append(ctx context.Context, stream string, expected ExpectedVersion, events ...bus.Signal) (AppendResult, error) {
	res, err := l.AppendMulti(ctx, []StreamAppend{{Stream: stream, Expected: expected, Events: events}})
	if err != nil {
		return AppendResult{}, err
	}
	return res[0], nil
}

// AppendMulti appends to several streams in one atomic batch, each part
// with its own expected version: either every part is written or none is.
// A stream may appear in several parts; later parts see the earlier ones.
// Results are in the order of parts. See Append for duplicates and errors.
func (l *Log) AppendMulti(ctx context.Context, parts []StreamAppend) ([]AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prepared, err := l.prepare(parts)
	if err != nil {
		return nil, err
	}
	if err := l.enter(); err != nil {
		return nil, err
	}
	defer l.leave()
	req := &appendRequest{parts: prepared, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	l.commit(req)
	if req.err != nil {
		return nil, req.err
	}
	// Duplicates are answered once their originals are durable; when the
	// request wrote anything this holds already.
	if err := l.waitDurable(ctx, req.waitFor); err != nil {
		return nil, err
	}
	return req.results, nil
}

// preparedEvent is an event validated and encoded outside the sequencer,
// with a header to be filled in once its position is known.
type preparedEvent struct {
	value []byte // the entry value, header zero until sequenced
	idem  []byte // the idempotency key
	hash  uint64 // l.hashIdem(idem), for the filters
	id    string
}

type preparedPart struct {
	stream   string
	expected ExpectedVersion
	events   []preparedEvent
	allNew   bool
}

// prepare validates every part and encodes its events, so that the
// sequencer only looks up, assigns and patches headers. It runs in the
// caller's goroutine, concurrently with other callers.
func (l *Log) prepare(parts []StreamAppend) ([]preparedPart, error) {
	total := 0
	for _, p := range parts {
		total += len(p.Events)
	}
	if total > l.opts.maxAppendEvents() {
		return nil, bus.Errorf(bus.ReasonTooLarge, "append of %d events: the limit is %d per call", total, l.opts.maxAppendEvents())
	}
	out := make([]preparedPart, len(parts))
	events := make([]preparedEvent, total) // one allocation for every part
	for i, p := range parts {
		if err := ValidateStream(p.Stream); err != nil {
			return nil, err
		}
		if len(p.Events) == 0 {
			return nil, bus.Errorf(bus.ReasonInvalidRequest, "append to %s: no events", p.Stream)
		}
		out[i] = preparedPart{stream: p.Stream, expected: p.Expected, events: events[:len(p.Events):len(p.Events)], allNew: p.AllNew}
		events = events[len(p.Events):]
		for j := range p.Events {
			ev := &p.Events[j]
			if err := bus.ValidateSignal(ev, l.opts.Limits); err != nil {
				return nil, fmt.Errorf("append to %s: event %d (id %q): %w", p.Stream, j, ev.ID(), err)
			}
			pe, err := l.prepareEvent(p.Stream, ev)
			if err != nil {
				return nil, fmt.Errorf("append to %s: event %d (id %q): %w", p.Stream, j, ev.ID(), err)
			}
			out[i].events[j] = pe
		}
	}
	return out, nil
}

// prepareEvent encodes a validated event: its value and its idempotency
// key share one allocation.
func (l *Log) prepareEvent(stream string, ev *bus.Signal) (preparedEvent, error) {
	id, source, data := ev.ID(), ev.Source(), ev.Data()
	// Room for the header, the stream, id and source, the other
	// attributes at a guess (append grows the buffer if it is short), the
	// data and the idempotency key.
	est := headerLen + 64 + 2*len(stream) + 2*len(id) + 2*len(source) + len(ev.Type()) + len(ev.Subject()) + len(data) + 12
	buf := appendEntryBodyOf(make([]byte, 0, est), stream, id, source, ev)
	n := len(buf) // prepare checked the attributes' size (bus.ValidateSignal)
	buf = appendIdemKey(buf, stream, source, id)
	idem := buf[n:]
	return preparedEvent{value: buf[:n:n], idem: idem, hash: l.hashIdem(idem), id: id}, nil
}

// existing looks an idempotency key up in the database, which under
// commitMu holds every batch committed before the current group.
func (l *Log) existing(idem []byte) (Position, bool, error) {
	v, closer, err := l.db.Get(idem)
	if errors.Is(err, pebble.ErrNotFound) {
		return Position{}, false, nil
	}
	if err != nil {
		return Position{}, false, err
	}
	defer closer.Close()
	if len(v) != 16 {
		return Position{}, false, errors.New("idempotency record is not 16 bytes")
	}
	return Position{Seq: binary.BigEndian.Uint64(v), GlobalSeq: binary.BigEndian.Uint64(v[8:]), Duplicate: true}, true, nil
}

func appendIdem(b []byte, p Position) []byte {
	b = binary.BigEndian.AppendUint64(b, p.Seq)
	return binary.BigEndian.AppendUint64(b, p.GlobalSeq)
}

// waitDurable waits until the durable watermark reaches gseq.
func (l *Log) waitDurable(ctx context.Context, gseq uint64) error {
	for {
		ch := l.Notify()
		if l.Durable() >= gseq {
			return nil
		}
		if err := l.failure(); err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return ErrClosed
		}
	}
}

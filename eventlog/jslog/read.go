package jslog

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// ReadStream returns an iterator over the entries of stream, with the
// options and errors of the Pebble log's ReadStream: it yields a non-nil
// error with a zero Entry when it cannot start (an invalid name or
// pattern, an unknown stream: eventlog.ErrNotFound), a damaged message as
// an *eventlog.CorruptError, and ends at the first error reading from
// JetStream. It reads what the stream leader holds when it starts (every
// entry acknowledged before the call), one message at a time, from the
// leader.
func (l *Log) ReadStream(stream string, o eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		if err := eventlog.ValidateStream(stream); err != nil {
			yield(eventlog.Entry{}, err)
			return
		}
		var pattern *bus.Pattern
		if o.Types != "" {
			p, err := bus.CompilePattern(o.Types)
			if err != nil {
				yield(eventlog.Entry{}, err)
				return
			}
			pattern = &p
		}
		refs, version, part, err := l.index(stream)
		if err != nil {
			yield(eventlog.Entry{}, err)
			return
		}
		if version == 0 {
			yield(eventlog.Entry{}, fmt.Errorf("read %s: %w", stream, eventlog.ErrNotFound))
			return
		}
		// The messages to read, in reading order, and the range of
		// versions wanted.
		// A truncated stream begins past version 1: a read from before
		// its first entry is gone, as on the Pebble log.
		lo, hi := refs[0].first, version
		if !o.Backward && o.From != 0 && o.From < lo {
			yield(eventlog.Entry{}, &eventlog.GoneError{Stream: stream, Seq: o.From, First: lo})
			return
		}
		if o.Backward {
			if o.From != 0 && o.From < hi {
				hi = o.From
			}
		} else if o.From > lo {
			lo = o.From
		}
		if lo > hi {
			return
		}
		var st streamState
		st.msgs = refs
		from, to := st.refAt(lo), st.refAt(hi)
		n := 0
		visit := func(i int) bool {
			ctx, cancel := l.timeout()
			m, err := l.parts[part].GetMsg(ctx, refs[i].seq)
			cancel()
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				// Truncated (by another node) since this Log indexed it.
				yield(eventlog.Entry{}, fmt.Errorf("read %s at sequence %d: the entries from version %d were truncated: %w", stream, refs[i].seq, refs[i].first, eventlog.ErrGone))
				return false
			}
			if err != nil {
				yield(eventlog.Entry{}, fmt.Errorf("read %s at sequence %d: %w", stream, refs[i].seq, err))
				return false
			}
			entries, err := decodeEntries(stream, m)
			if err != nil {
				return yield(eventlog.Entry{}, err)
			}
			if o.Backward {
				for a, b := 0, len(entries)-1; a < b; a, b = a+1, b-1 {
					entries[a], entries[b] = entries[b], entries[a]
				}
			}
			for _, e := range entries {
				if e.Seq < lo || e.Seq > hi || pattern != nil && !pattern.Match(e.Event.Type()) {
					continue
				}
				if !yield(e, nil) {
					return false
				}
				if n++; o.Limit > 0 && n >= o.Limit {
					return false
				}
			}
			return true
		}
		if o.Backward {
			for i := to; i >= from; i-- {
				if !visit(i) {
					return
				}
			}
			return
		}
		for i := from; i <= to; i++ {
			if !visit(i) {
				return
			}
		}
	}
}

// index brings stream's state up to its subject's last message and returns
// a copy of its message index, its version and its partition.
func (l *Log) index(stream string) ([]msgRef, uint64, int, error) {
	st := l.cache.acquire(l, stream)
	defer l.cache.release(st)
	// No deadline for the whole: each request has its own (sync), and
	// the messages to read end at the subject's last when sync began.
	ctx := context.Background()
	if err := l.sync(ctx, st); err != nil {
		return nil, 0, 0, err
	}
	if err := l.trim(ctx, st); err != nil {
		return nil, 0, 0, err
	}
	return append([]msgRef(nil), st.msgs...), st.version, st.part, nil
}

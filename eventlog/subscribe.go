package eventlog

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/jido-bus/jido-bus/bus"
)

// SubscribeOptions select what a Subscription delivers.
type SubscribeOptions struct {
	// Stream is the stream to follow; empty follows the global log.
	Stream string
	// From is the first position to deliver (a stream sequence, or a
	// global sequence when Stream is empty). Zero means the first entry
	// committed after Subscribe returns.
	From uint64
	// Types is a bus pattern; only matching entries are delivered. Empty
	// means every type.
	Types string
	// Buffer is how many entries the subscription reads ahead from disk at
	// a time, which bounds its memory. Zero means 256.
	Buffer int
}

// Subscription delivers the entries of a stream or of the global log in
// order: first those already in the log from its start position (catch
// up), then each new one once it is durable (follow). Catching up and
// following are the same loop — read from disk from the next position, then
// wait for the durable watermark to move — so there is no gap and no
// duplicate at the switch, a slow subscriber simply reads from disk where
// it left off, and writers never wait for a subscriber: an append only
// closes a notification channel.
//
// A Subscription is used by one goroutine at a time. It holds no Pebble
// iterator between calls to Next, so an idle one costs only its buffer.
type Subscription struct {
	l       *Log
	opts    SubscribeOptions
	pattern *bus.Pattern
	next    uint64 // the next position to read from disk
	buf     []scanned
	pos     int
	closed  bool
}

// Subscribe starts a subscription. It fails for an invalid stream name or
// pattern, or ErrClosed. A stream that does not exist yet is followed
// from its first entry.
func (l *Log) Subscribe(o SubscribeOptions) (*Subscription, error) {
	if o.Stream != "" {
		if err := ValidateStream(o.Stream); err != nil {
			return nil, err
		}
	}
	pattern, err := compileTypes(o.Types)
	if err != nil {
		return nil, err
	}
	if o.Buffer <= 0 {
		o.Buffer = 256
	}
	if err := l.enter(); err != nil {
		return nil, err
	}
	defer l.leave()
	s := &Subscription{l: l, opts: o, pattern: pattern, next: o.From}
	if s.next == 0 {
		if o.Stream == "" {
			s.next = l.Durable() + 1
		} else {
			s.next = l.durableHead(o.Stream) + 1
		}
	}
	return s, nil
}

// durableHead returns the sequence of the last durable entry of stream:
// entries above the watermark (appended, fsync in flight) are still to
// come, so a subscription from "now" must start right after the durable
// ones. A damaged last entry counts as seen.
func (l *Log) durableHead(stream string) uint64 {
	m, ok := l.meta(stream)
	if !ok {
		return 0
	}
	for s := range l.scan(l.streamScan(stream, 0, true)) {
		return s.seq
	}
	return m.first - 1
}

// Position returns the next position the subscription will read: every
// entry before it has been delivered (or filtered out).
func (s *Subscription) Position() uint64 {
	if s.pos < len(s.buf) {
		return s.buf[s.pos].seq
	}
	return s.next
}

// Next returns the next entry, waiting for one to be committed if needed.
// It returns ctx's error when ctx ends, ErrClosed when the Subscription or
// the Log is closed, a *GoneError when the next position was truncated
// away (the subscriber must restart from a later one), and a *CorruptError
// for a damaged entry — the following call continues after it.
func (s *Subscription) Next(ctx context.Context) (Entry, error) {
	for {
		if s.closed {
			return Entry{}, ErrClosed
		}
		if s.pos < len(s.buf) {
			e := s.buf[s.pos]
			s.buf[s.pos] = scanned{}
			s.pos++
			return e.entry, e.err
		}
		ch := s.l.Notify()
		n, err := s.refill()
		if err != nil {
			return Entry{}, err
		}
		if n > 0 {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Entry{}, ctx.Err()
		case <-s.l.done:
			return Entry{}, ErrClosed
		}
	}
}

// TryNext is Next without waiting: it returns the next entry and true when
// one is durable now, or false once every durable entry has been read or
// filtered out — Position then says how far that went, so a subscriber
// that filters by type can tell "nothing more now" from "nothing of mine".
func (s *Subscription) TryNext() (Entry, bool, error) {
	if s.closed {
		return Entry{}, false, ErrClosed
	}
	if s.pos < len(s.buf) {
		e := s.buf[s.pos]
		s.buf[s.pos] = scanned{}
		s.pos++
		return e.entry, true, e.err
	}
	for {
		before := s.next
		n, err := s.refill()
		if err != nil {
			return Entry{}, false, err
		}
		if n > 0 {
			return s.TryNext()
		}
		if s.next == before {
			return Entry{}, false, nil
		}
	}
}

// refill reads up to Buffer entries from s.next and reports how many it
// buffered.
func (s *Subscription) refill() (int, error) {
	if err := s.l.enter(); err != nil {
		return 0, err
	}
	defer s.l.leave()
	var src iter.Seq[scanned]
	var spec scanSpec
	if s.opts.Stream == "" {
		spec = globalScan(s.next, false)
	} else {
		if m, ok := s.l.meta(s.opts.Stream); ok && s.next < m.first {
			return 0, &GoneError{Stream: s.opts.Stream, Seq: s.next, First: m.first}
		}
		spec = s.l.streamScan(s.opts.Stream, s.next, false)
	}
	spec.types = s.pattern
	src = s.l.scan(spec)
	s.buf, s.pos = s.buf[:0], 0
	for e := range src {
		if _, corrupt := errors.AsType[*CorruptError](e.err); e.err != nil && !corrupt {
			return 0, fmt.Errorf("subscription at %d: %w", s.next, e.err)
		}
		s.next = e.seq + 1
		if e.drop(s.pattern) {
			continue
		}
		s.buf = append(s.buf, e)
		if len(s.buf) >= s.opts.Buffer {
			break
		}
	}
	return len(s.buf), nil
}

// Close ends the subscription; Next then returns ErrClosed. It does not
// close the Log, and returns nil: an io.Closer.
func (s *Subscription) Close() error {
	s.closed = true
	s.buf = nil
	return nil
}

package jslog

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog"
)

// streamState is what the Log knows of one log stream: everything its
// subject held when last read, plus what the Log appended since. It is
// exact as long as lastSeq is the subject's last message; an append fenced
// on lastSeq proves that or is refused.
type streamState struct {
	mu      sync.Mutex // held by the one caller appending to or reading the stream
	name    string
	part    int
	subject string

	loaded  bool
	lastSeq uint64   // JetStream sequence of the subject's last message (0: none)
	version uint64   // the stream's version: events on the subject
	msgs    []msgRef // the subject's messages, oldest first
	ids     map[string]eventlog.Position

	refs int           // callers holding or waiting for mu (under stateCache.mu)
	elem *list.Element // in stateCache.lru
}

// msgRef places one message: its sequence in the partition stream and the
// version of its first event.
type msgRef struct {
	seq   uint64
	first uint64
}

func idemKey(source, id string) string { return source + "\x00" + id }

// refAt returns the index in msgs of the message holding version v
// (1 ≤ v ≤ version).
func (st *streamState) refAt(v uint64) int {
	i, found := slices.BinarySearchFunc(st.msgs, v, func(m msgRef, v uint64) int {
		switch {
		case m.first < v:
			return -1
		case m.first > v:
			return 1
		}
		return 0
	})
	if found {
		return i
	}
	return i - 1
}

// apply adds a message read from or written to the subject.
func (st *streamState) apply(seq uint64, first uint64, ids []eventRef) {
	st.msgs = append(st.msgs, msgRef{seq: seq, first: first})
	for i, e := range ids {
		k := idemKey(e.Source, e.ID)
		if _, ok := st.ids[k]; !ok {
			st.ids[k] = eventlog.Position{Seq: first + uint64(i), GlobalSeq: seq, Duplicate: true}
		}
	}
	st.lastSeq = seq
	st.version = first + uint64(len(ids)) - 1
}

// forgetBefore drops what st knows of the messages below sequence seq,
// removed by a truncation: the stream's entries now begin at version
// first (in the message at seq, or later).
func (st *streamState) forgetBefore(seq, first uint64) {
	i, _ := slices.BinarySearchFunc(st.msgs, seq, func(m msgRef, s uint64) int { return cmp.Compare(m.seq, s) })
	st.msgs = slices.Clone(st.msgs[i:])
	for k, pos := range st.ids {
		if pos.Seq < first {
			delete(st.ids, k)
		}
	}
	if len(st.msgs) == 0 {
		st.version = max(st.version, first-1)
	}
}

// gone reports whether the message at seq is no longer in ps (an error
// reading it is not taken for an answer: false).
func (l *Log) gone(ctx context.Context, ps jetstream.Stream, seq uint64) bool {
	ctx, cancel := l.request(ctx)
	defer cancel()
	_, err := ps.GetMsg(ctx, seq)
	return errors.Is(err, jetstream.ErrMsgNotFound)
}

// trim drops from st the messages a truncation (by any Log) removed
// since st last read the subject's first message.
func (l *Log) trim(ctx context.Context, st *streamState) error {
	if len(st.msgs) == 0 {
		return nil
	}
	ctx, cancel := l.request(ctx)
	defer cancel()
	fm, err := l.parts[st.part].GetMsg(ctx, 1, jetstream.WithGetMsgSubject(st.subject))
	if err != nil {
		return fmt.Errorf("read %s: %w", st.name, err)
	}
	if fm.Sequence > st.msgs[0].seq {
		h, err := readHeader(fm)
		if err != nil {
			return &eventlog.CorruptError{Stream: st.name, GlobalSeq: fm.Sequence, Reason: err.Error()}
		}
		st.forgetBefore(fm.Sequence, h.first())
	}
	return nil
}

func (st *streamState) reset() {
	st.loaded, st.lastSeq, st.version, st.msgs = false, 0, 0, nil
	st.ids = map[string]eventlog.Position{}
}

// sync brings st up to the subject's last message, reading (from the
// stream leader) each message it has not seen. Each request has its own
// Timeout within ctx: a long stream read for the first time takes a
// request per message, and on a loaded machine their sum may pass any
// one deadline while every request is answered.
func (l *Log) sync(ctx context.Context, st *streamState) error {
	ps := l.parts[st.part]
	rctx, cancel := l.request(ctx)
	last, err := ps.GetLastMsgForSubject(rctx, st.subject)
	cancel()
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		if st.lastSeq != 0 {
			st.reset()
			return &eventlog.CorruptError{Stream: st.name, Reason: "its JetStream subject " + st.subject + " was emptied: the log's messages were purged outside the log"}
		}
		st.loaded = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", st.name, err)
	}
	if last.Sequence < st.lastSeq {
		st.reset()
		return &eventlog.CorruptError{Stream: st.name, Reason: fmt.Sprintf("its last message went back from sequence %d to %d: messages were removed outside the log", st.lastSeq, last.Sequence)}
	}
	for next := st.lastSeq + 1; st.lastSeq < last.Sequence; {
		m := last
		if next <= last.Sequence-1 {
			rctx, cancel := l.request(ctx)
			m, err = ps.GetMsg(rctx, next, jetstream.WithGetMsgSubject(st.subject))
			cancel()
			if err != nil {
				return fmt.Errorf("read %s from sequence %d: %w", st.name, next, err)
			}
		}
		h, ids, err := decodeRefs(m)
		if err == nil && st.lastSeq == 0 && st.version == 0 && h.first() > 1 {
			// The subject's first message is past version 1: the stream
			// was truncated (TruncateBefore), and its versions go on from
			// the first one kept.
			st.version = h.first() - 1
		}
		if err == nil && st.lastSeq != 0 && h.first() > st.version+1 && st.lastSeq < m.Sequence && l.gone(ctx, ps, st.lastSeq) {
			// The last message this Log knew is gone, so every one
			// before it is too (a truncation purges a prefix of the
			// subject, by this Log or another): the stream goes on from
			// this message.
			st.forgetBefore(m.Sequence, h.first())
		}
		if err != nil || h.first() != st.version+1 {
			if err == nil {
				err = fmt.Errorf("it starts at version %d, the stream is at %d", h.first(), st.version)
			}
			// The version it should have held, named before reset forgets it.
			damaged := &eventlog.CorruptError{Stream: st.name, Seq: st.version + 1, GlobalSeq: m.Sequence, Reason: err.Error()}
			st.reset()
			return damaged
		}
		st.apply(m.Sequence, h.first(), ids)
		next = m.Sequence + 1
	}
	st.loaded = true
	return nil
}

// stateCache holds the streamStates of the streams recently used, up to a
// bound; a state in use is never dropped.
type stateCache struct {
	mu     sync.Mutex
	max    int
	states map[string]*streamState
	lru    *list.List // of *streamState, least recently released first
}

func newStateCache(max int) *stateCache {
	return &stateCache{max: max, states: map[string]*streamState{}, lru: list.New()}
}

// acquire returns the state of stream, locked for the caller.
func (c *stateCache) acquire(l *Log, stream string) *streamState {
	c.mu.Lock()
	st, ok := c.states[stream]
	if !ok {
		p := Partition(stream, l.opts.Partitions)
		st = &streamState{name: stream, part: p, subject: l.logSubject(stream, p), ids: map[string]eventlog.Position{}}
		st.elem = c.lru.PushBack(st)
		c.states[stream] = st
	}
	st.refs++
	c.mu.Unlock()
	st.mu.Lock()
	return st
}

// release unlocks st and drops the least recently used states past the
// bound.
func (c *stateCache) release(st *streamState) {
	st.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	st.refs--
	c.lru.MoveToBack(st.elem)
	for e := c.lru.Front(); e != nil && len(c.states) > c.max; {
		next := e.Next()
		if old := e.Value.(*streamState); old.refs == 0 {
			c.lru.Remove(e)
			delete(c.states, old.name)
		}
		e = next
	}
}

// acquireAll locks the states of streams (distinct names) in name order,
// so that two multi-stream appends cannot deadlock.
func (c *stateCache) acquireAll(l *Log, streams []string) []*streamState {
	sorted := slices.Clone(streams)
	slices.Sort(sorted)
	byName := make(map[string]*streamState, len(sorted))
	for _, s := range sorted {
		byName[s] = c.acquire(l, s)
	}
	out := make([]*streamState, len(streams))
	for i, s := range streams {
		out[i] = byName[s]
	}
	return out
}

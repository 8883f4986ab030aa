package eventlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// pipelineMin is the fewest waiting requests for which the leader passes
// the leadership on before its fsync (see commit). Sequencing a request
// takes about 5–10µs and an fsync 200–400µs here, so pipelining pays from
// about 20 waiting requests; below that, one larger group per fsync does
// better.
const pipelineMin = 16

// appendRequest is one AppendMulti call waiting to be committed. The
// leader that commits it fills in results, waitFor and err, then closes
// done.
type appendRequest struct {
	parts   []preparedPart
	results []AppendResult
	waitFor uint64 // highest global seq of an original its duplicates name
	wrote   bool
	err     error
	done    chan struct{} // closed when the request is answered
	lead    chan struct{} // receives when the request's caller becomes the leader
}

// commit is the group commit. Requests queue up; one caller at a time is
// the leader. The leader takes every queued request, sequences the group
// into one Pebble batch under commitMu and hands it to Pebble's commit
// pipeline (which writes it to the WAL), releases commitMu and waits until
// the group before its own is synced. Then, if at least pipelineMin
// requests are waiting, it passes the leadership to the oldest of them
// before waiting for its own fsync, so that the next group is sequenced
// while this one syncs; with fewer waiting, it passes the leadership on
// only after its own fsync, so that what arrives meanwhile joins the next
// group. Either way what arrives during one fsync shares the next one, and
// no more than two groups are in flight. The other callers only wait for
// their answer; none of them takes a lock the leader needs.
//
// A group is reported durable only when its own sync succeeded and no
// earlier one failed (l.failure), since its batch follows the earlier
// ones in the WAL; the durable watermark only ever moves to the end of
// such a group.
//
// Measured on 2 cores with 64 appenders of two events each: passing the
// leadership on before the fsync without waiting for the previous group
// gave groups of 1.3 requests; always waiting for its own fsync first gave
// groups of about 16, but left the disk idle while the next group was
// sequenced (about 200µs a group) and the sequencer idle during the fsync
// (about 430µs): 26k appends/s. Overlapping the two gave groups of about
// 22 and 38k/s in the same conditions, but with 8 appenders it split them
// into two groups and two fsyncs where one would do, costing about a
// third more CPU per append; hence pipelineMin. (The disk of that shared
// machine is slower in some runs than in others; compare within a run.)
func (l *Log) commit(req *appendRequest) {
	l.queueMu.Lock()
	l.queue = append(l.queue, req)
	if l.leading {
		l.queueMu.Unlock()
		select {
		case <-req.done:
			return
		case <-req.lead:
		}
	} else {
		l.leading = true
		l.queueMu.Unlock()
	}

	l.queueMu.Lock()
	group := l.queue
	l.queue = nil
	l.queueMu.Unlock()

	l.commitMu.Lock()
	batch, last, err := l.sequenceGroup(group)
	prev := l.syncing
	var mine chan struct{}
	if batch != nil {
		mine = make(chan struct{})
		l.syncing = mine
	}
	l.commitMu.Unlock()

	// The group before ours may still be syncing. Wait for it before
	// passing the leadership on, so that one group syncs while the next
	// is sequenced, and no more. With few requests waiting, sequencing
	// them would take a small part of an fsync, so overlapping gains
	// less than it costs to split them over two fsyncs: keep them
	// waiting until ours is done, for a larger next group.
	if prev != nil {
		<-prev
	}
	passed := false
	pass := func(early bool) {
		l.queueMu.Lock()
		switch {
		case early && len(l.queue) < pipelineMin:
		case len(l.queue) > 0:
			l.queue[0].lead <- struct{}{}
			passed = true
		default:
			l.leading = false
			passed = true
		}
		l.queueMu.Unlock()
	}
	pass(batch != nil)

	if batch != nil {
		if err == nil && !l.opts.NoSync {
			if err = batch.SyncWait(); err != nil {
				err = fmt.Errorf("append: sync batch ending at global seq %d: %w", last, l.fail(err))
			}
		}
		batch.Close()
		if err == nil {
			// Our batch follows the previous group's in the WAL; if that
			// one failed, ours must not count as durable either.
			err = l.failure()
		}
		if err == nil {
			l.advanceDurable(last)
		}
		close(mine)
	}
	if !passed {
		pass(false)
	}
	for _, r := range group {
		if err != nil && r.err == nil && r.wrote {
			r.err, r.results = err, nil
		}
		close(r.done)
	}
}

// sequenceGroup runs under commitMu. It checks each request against the
// state left by the ones before it, assigns sequences to those that pass,
// and hands one batch with all of them to Pebble. A request that fails
// (wrong version, lookup error) gets its error and contributes nothing.
// It returns the batch (nil when nothing is written), the last global
// sequence in it, and an error that applies to every request that wrote.
func (l *Log) sequenceGroup(group []*appendRequest) (*pebble.Batch, uint64, error) {
	if err := l.failure(); err != nil {
		for _, r := range group {
			r.err = err
		}
		return nil, 0, nil
	}
	l.startFirstFilter()
	g := &l.group
	g.reset(l.lastGSeq)
	defer g.reset(0)
	g.now = time.Now()
	for _, r := range group {
		before := len(g.fresh)
		if err := l.sequenceRequest(g, r); err != nil {
			r.err = err
			continue
		}
		r.wrote = len(g.fresh) > before // false: only duplicates
	}
	if len(g.fresh) == 0 {
		return nil, 0, nil
	}
	b := l.db.NewBatch()
	l.writeGroup(g, b, group)
	for stream, m := range g.metas {
		g.key = appendMetaKey(g.key[:0], stream)
		g.val = appendMeta(g.val[:0], m)
		_ = b.Set(g.key, g.val, nil)
	}
	_ = b.Set(keyLastGSeq, binary.BigEndian.AppendUint64(g.val[:0], g.gseq), nil)
	// Raised before the batch is visible, so that no reader meets an index
	// entry above it; a batch that then fails leaves it higher than
	// needed, which only loosens the check.
	l.handedOut.Store(max(l.handedOut.Load(), g.gseq))
	err := l.write(func() error {
		if l.opts.NoSync {
			return l.db.Apply(b, l.writeOpts)
		}
		return l.db.ApplyNoSyncWait(b, l.writeOpts)
	})
	if err != nil {
		b.Close()
		return nil, 0, fmt.Errorf("append: commit batch ending at global seq %d: %w", g.gseq, err)
	}
	l.lastGSeq = g.gseq
	l.stateMu.Lock()
	for stream, m := range g.metas {
		l.streams[stream] = m
	}
	l.stateMu.Unlock()
	for i := range g.fresh {
		l.addIdem(g.fresh[i].hash)
	}
	if l.filter != nil && l.filter.full() {
		l.startFilterBuild(2 * l.filter.keys.Load())
	}
	return b, g.gseq, nil
}

// groupState is the state a group builds on top of the committed one: the
// streams it changed, the idempotency keys it writes, the last global
// sequence it handed out. The Log keeps one and reuses it from group to
// group (under commitMu), so that a group allocates next to nothing.
type groupState struct {
	metas map[string]streamMeta // streams the group changed
	fresh []freshKey            // idempotency keys the group writes, in order
	index map[uint64]int        // hash → the first fresh key with that hash
	gseq  uint64
	now   time.Time
	undo  []metaUndo // what a failing request must restore
	key   []byte     // scratch: Batch.Set copies
	val   []byte
}

// freshKey is an event the group writes: its key and position.
type freshKey struct {
	idem []byte
	hash uint64
	pos  Position
}

type metaUndo struct {
	stream string
	meta   streamMeta
	had    bool
}

// reset readies g for a group that starts after global sequence gseq, and
// drops what the last group referred to.
func (g *groupState) reset(gseq uint64) {
	if g.metas == nil {
		g.metas = make(map[string]streamMeta)
		g.index = make(map[uint64]int)
	}
	clear(g.metas)
	clear(g.index)
	clear(g.fresh)
	g.fresh = g.fresh[:0]
	g.gseq = gseq
}

// find returns the position of a key the group writes.
func (g *groupState) find(idem []byte, h uint64) (Position, bool) {
	i, ok := g.index[h]
	if !ok {
		return Position{}, false
	}
	if bytes.Equal(g.fresh[i].idem, idem) {
		return g.fresh[i].pos, true
	}
	// Another key has the same hash: the index names only the first, so
	// look at every one.
	for _, f := range g.fresh[i+1:] {
		if f.hash == h && bytes.Equal(f.idem, idem) {
			return f.pos, true
		}
	}
	return Position{}, false
}

func (g *groupState) add(f freshKey) {
	if _, ok := g.index[f.hash]; !ok {
		g.index[f.hash] = len(g.fresh)
	}
	g.fresh = append(g.fresh, f)
}

// meta returns the state of stream as the group left it so far; code
// holding commitMu may read l.streams without stateMu.
func (g *groupState) meta(l *Log, stream string) (streamMeta, bool) {
	if m, ok := g.metas[stream]; ok {
		return m, true
	}
	m := l.streams[stream]
	if m.first == 0 {
		m.first = 1
	}
	return m, false
}

// sequenceRequest checks one request and assigns the positions of its new
// events in g, filling in r.results. When the request fails, g is as it
// was before: a failing request leaves no trace.
func (l *Log) sequenceRequest(g *groupState, r *appendRequest) error {
	freshMark, gseqMark := len(g.fresh), g.gseq
	g.undo = g.undo[:0]
	rollback := func() {
		for i := len(g.undo) - 1; i >= 0; i-- {
			u := g.undo[i]
			if u.had {
				g.metas[u.stream] = u.meta
			} else {
				delete(g.metas, u.stream)
			}
		}
		for _, f := range g.fresh[freshMark:] {
			if i, ok := g.index[f.hash]; ok && i >= freshMark {
				delete(g.index, f.hash)
			}
		}
		clear(g.fresh[freshMark:])
		g.fresh = g.fresh[:freshMark]
		g.gseq = gseqMark
	}
	n := 0
	for _, p := range r.parts {
		n += len(p.events)
	}
	positions := make([]Position, n)
	r.results = make([]AppendResult, len(r.parts))
	r.waitFor = 0
	for i, p := range r.parts {
		m, had := g.meta(l, p.stream)
		head := m.head
		res := AppendResult{Stream: p.stream, Positions: positions[:len(p.events):len(p.events)]}
		positions = positions[len(p.events):]
		// Each event is a duplicate of one written by this request or an
		// earlier one of the group, or of a stored one, or new. New ones
		// get positions at once; the version check below undoes them when
		// it fails.
		fresh := 0
		for j := range p.events {
			ev := &p.events[j]
			pos, dup := g.find(ev.idem, ev.hash)
			if !dup && l.mayHaveIdem(ev.hash) {
				var err error
				if pos, dup, err = l.existing(ev.idem); err != nil {
					rollback()
					return fmt.Errorf("append to %s: idempotency lookup of event %d (id %q): %w", p.stream, j, ev.id, err)
				}
			}
			if dup && p.allNew {
				rollback()
				return &DuplicateError{Stream: p.stream, Index: j, ID: ev.id, Existing: pos}
			}
			if dup {
				pos.Duplicate = true
				res.Positions[j] = pos
				r.waitFor = max(r.waitFor, pos.GlobalSeq)
				continue
			}
			g.gseq++
			m.head++
			m.count++
			m.bytes += uint64(len(ev.value))
			pos = Position{Seq: m.head, GlobalSeq: g.gseq}
			res.Positions[j] = pos
			g.add(freshKey{idem: ev.idem, hash: ev.hash, pos: pos})
			fresh++
		}
		if fresh > 0 && !p.expected.matches(head) {
			rollback()
			return &AppendError{Stream: p.stream, Expected: p.expected, Actual: head}
		}
		g.undo = append(g.undo, metaUndo{stream: p.stream, meta: g.metas[p.stream], had: had})
		g.metas[p.stream] = m
		res.Version = m.head
		r.results[i] = res
	}
	return nil
}

// writeGroup adds the new events of the sequenced requests of a group
// to b: first every value under its global key, then every stream index
// entry, then every idempotency key. Pebble inserts a batch into its
// memtable in batch order and reuses the position of the last insert when
// the next key falls right after it; global keys in a row are each right
// after the last.
func (l *Log) writeGroup(g *groupState, b *pebble.Batch, group []*appendRequest) {
	for kind := range 3 {
		for _, r := range group {
			if !r.wrote {
				continue
			}
			for i, p := range r.parts {
				for j := range p.events {
					pos := r.results[i].Positions[j]
					if pos.Duplicate {
						continue
					}
					ev := &p.events[j]
					switch kind {
					case 0:
						setHeader(ev.value, pos.GlobalSeq, pos.Seq, g.now)
						g.key = appendGlobalKey(g.key[:0], pos.GlobalSeq)
						_ = b.Set(g.key, ev.value, nil)
					case 1:
						g.key = appendStreamKey(g.key[:0], p.stream, pos.Seq)
						g.val = binary.BigEndian.AppendUint64(g.val[:0], pos.GlobalSeq)
						_ = b.Set(g.key, g.val, nil)
					case 2:
						g.val = appendIdem(g.val[:0], pos)
						_ = b.Set(ev.idem, g.val, nil)
					}
				}
			}
		}
	}
}

package projections

import (
	"context"
	"errors"

	"github.com/jido-bus/jido-bus/eventlog"
)

// feedBatchLen is how many entries the feed hands the fold at a time, and
// feedDepth how many batches may wait for the fold: together they bound
// how far the feed reads ahead (16,384 entries, some 20 MB of decoded
// conversation events). That is enough for the feed to go on reading
// while the fold writes a checkpoint (tens of milliseconds during a
// rebuild) instead of stalling after a few thousand entries.
const (
	feedBatchLen = 256
	feedDepth    = 64
)

// feed reads the log ahead of the fold, on a goroutine of its own: it takes
// entries from the subscription and prepares them (Preparer), so that
// reading and decoding the log use one core while the fold uses another.
// The pass that starts a feed stops it before it returns; the subscription
// belongs to the feed's goroutine until then.
type feed struct {
	out    chan *feedBatch // to the fold, in log order
	free   chan *feedBatch // batches the fold is done with, for reuse
	stop   chan struct{}   // closed by the fold when it no longer receives
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
}

// feedBatch is a run of entries and where the subscription stood after
// them. A batch with end or err set is the feed's last.
type feedBatch struct {
	entries []Entry
	// next is the subscription's position after the batch: every entry
	// before it has been delivered, in this batch or an earlier one, or
	// filtered out.
	next uint64
	// idle: the feed had read up to the durable watermark (following the
	// log), so the fold should make its work visible before waiting.
	idle bool
	// end: catching up, the feed has passed its target.
	end bool
	// err is why the subscription ended after the entries: the context
	// ended, the Log closed, or a storage error.
	err error
}

// startFeed starts the feed of a pass over sub. Catching up (follow false)
// it ends once it has passed target; following, it ends when ctx ends.
func (r *Runner) startFeed(ctx context.Context, sub *eventlog.Subscription, follow bool, target uint64) *feed {
	ctx, cancel := context.WithCancel(ctx)
	f := &feed{
		out:    make(chan *feedBatch, feedDepth),
		free:   make(chan *feedBatch, feedDepth+2),
		stop:   make(chan struct{}),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go func() {
		defer close(f.done)
		r.runFeed(ctx, f, sub, follow, target)
	}()
	return f
}

// close stops the feed's goroutine and waits for it.
func (f *feed) close() {
	f.cancel()
	close(f.stop)
	<-f.done
}

// send hands b to the fold; false when the fold has stopped receiving.
func (f *feed) send(b *feedBatch) bool {
	select {
	case f.out <- b:
		return true
	case <-f.stop:
		return false
	}
}

// batch returns an empty batch, reusing one the fold is done with.
func (f *feed) batch() *feedBatch {
	select {
	case b := <-f.free:
		return b
	default:
		return &feedBatch{entries: make([]Entry, 0, feedBatchLen)}
	}
}

// recycle drops what b refers to and offers it to the feed again.
func (f *feed) recycle(b *feedBatch) {
	for i := range b.entries {
		e := &b.entries[i]
		clear(e.memo)
		*e = Entry{memo: e.memo[:0]}
	}
	*b = feedBatch{entries: b.entries[:0]}
	select {
	case f.free <- b:
	default:
	}
}

func (r *Runner) runFeed(ctx context.Context, f *feed, sub *eventlog.Subscription, follow bool, target uint64) {
	b := f.batch()
	for {
		next := sub.Position()
		if !follow && next > target {
			b.next, b.end = next, true
			f.send(b)
			return
		}
		if follow && next > r.log.Durable() {
			b.next, b.idle = next, true
			if !f.send(b) {
				return
			}
			b = f.batch()
		}
		e, err := sub.Next(ctx)
		if err != nil {
			if _, ok := errors.AsType[*eventlog.CorruptError](err); ok {
				r.damaged.Add(1)
				r.logger.Error("projection runner skips a damaged log entry", "err", err)
				continue
			}
			b.next, b.err = sub.Position(), err
			f.send(b)
			return
		}
		b.entries = appendEntry(b.entries, e)
		r.prepare(&b.entries[len(b.entries)-1])
		if len(b.entries) == feedBatchLen {
			b.next = sub.Position()
			if !f.send(b) {
				return
			}
			b = f.batch()
		}
	}
}

// appendEntry appends e to entries, reusing the memo slots of the entry
// that was there before the batch was recycled.
func appendEntry(entries []Entry, e eventlog.Entry) []Entry {
	n := len(entries)
	if n == cap(entries) {
		return append(entries, Entry{Entry: e})
	}
	entries = entries[:n+1]
	entries[n].Entry = e
	return entries
}

// prepare calls Prepare of every projection that selects e. A panic is
// ignored here: Apply meets it again and the pass reports it.
func (r *Runner) prepare(e *Entry) {
	defer func() { _ = recover() }()
	for _, p := range r.projs {
		if p.def.prepare == nil {
			continue
		}
		if _, ok := p.def.keyOf(&e.Entry, p.matchTypes); ok {
			p.def.prepare(e)
		}
	}
}

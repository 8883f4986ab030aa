package projections

import (
	"context"
	"errors"
	"sync"

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
	// preparerDepth is how many batches may wait for the preparer.
	preparerDepth = 4
)

// feed reads the log ahead of the fold in two stages, each on a goroutine
// of its own: the reader takes entries from the subscription (reading and
// decoding the log), the preparer prepares them (Preparer). On one
// goroutine, decoding and preparing together were the pipeline's slowest
// stage, and the fold waited for it. The pass that
// starts a feed stops it before it returns; the subscription belongs to
// the reader until then.
type feed struct {
	read   chan *feedBatch // from the reader to the preparer, in log order
	out    chan *feedBatch // to the fold, in log order
	free   chan *feedBatch // batches the fold is done with, for reuse
	stop   chan struct{}   // closed by the fold when it no longer receives
	cancel context.CancelFunc
	done   chan struct{} // closed when both goroutines have returned
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
		read: make(chan *feedBatch, preparerDepth),
		out:  make(chan *feedBatch, feedDepth),
		// Every batch there can be: those waiting in out and read, and
		// one in the hands of each of the reader, preparer and fold.
		free:   make(chan *feedBatch, feedDepth+preparerDepth+3),
		stop:   make(chan struct{}),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	var stages sync.WaitGroup
	stages.Go(func() {
		defer close(f.read)
		r.runFeed(ctx, f, sub, follow, target)
	})
	stages.Go(func() { r.runPrepare(f) })
	go func() {
		stages.Wait()
		close(f.done)
	}()
	return f
}

// close stops the feed's goroutines and waits for them.
func (f *feed) close() {
	f.cancel()
	close(f.stop)
	<-f.done
}

// send hands b to the fold; false when the fold has stopped receiving.
func (f *feed) send(b *feedBatch) bool { return f.hand(f.out, b) }

// pass hands b from the reader to the preparer; false when the fold has
// stopped receiving.
func (f *feed) pass(b *feedBatch) bool { return f.hand(f.read, b) }

func (f *feed) hand(to chan<- *feedBatch, b *feedBatch) bool {
	select {
	case to <- b:
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

// recycle drops what b refers to and offers it to the feed again. The
// fold is done with b's entries: their memoized values go back to their
// Memo (NewRecycledMemo).
func (f *feed) recycle(b *feedBatch) {
	for i := range b.entries {
		e := &b.entries[i]
		for _, s := range e.memo {
			s.key.(releaser).release(s.val)
		}
		clear(e.memo)
		*e = Entry{memo: e.memo[:0]}
	}
	*b = feedBatch{entries: b.entries[:0]}
	select {
	case f.free <- b:
	default:
	}
}

// runFeed is the reader: it reads the subscription into batches for the
// preparer, up to the target when catching up.
//
// It reads with TryNext, never Next: a subscription filtering by type
// advances past entries no projection selects without returning them, and
// Next would wait inside for a selected one. TryNext says when every
// durable entry has been read or filtered out, so the reader can report
// where it stands (an idle batch, or the end of a catch-up) whether or not
// the last entries were selected.
func (r *Runner) runFeed(ctx context.Context, f *feed, sub *eventlog.Subscription, follow bool, target uint64) {
	b := f.batch()
	for {
		if next := sub.Position(); !follow && next > target {
			b.next, b.end = next, true
			f.pass(b)
			return
		}
		// Taken before reading, so that no commit after the read is missed.
		notify := r.log.Notify()
		e, ok, err := sub.TryNext()
		if err != nil {
			if _, corrupt := errors.AsType[*eventlog.CorruptError](err); corrupt {
				r.damaged.Add(1)
				r.logger.Error("projection runner skips a damaged log entry", "err", err)
				continue
			}
			b.next, b.err = sub.Position(), err
			f.pass(b)
			return
		}
		if ok {
			b.entries = appendEntry(b.entries, e)
			if len(b.entries) == feedBatchLen {
				b.next = sub.Position()
				if !f.pass(b) {
					return
				}
				b = f.batch()
			}
			continue
		}
		// Every durable entry has been read or filtered out: the
		// subscription stands past the watermark, which is at least the
		// target of a catch-up.
		if !follow {
			b.next, b.end = max(sub.Position(), target+1), true
			f.pass(b)
			return
		}
		b.next, b.idle = sub.Position(), true
		if !f.pass(b) {
			return
		}
		b = f.batch()
		select {
		case <-notify:
		case <-ctx.Done():
			b.next, b.err = sub.Position(), ctx.Err()
			f.pass(b)
			return
		}
	}
}

// runPrepare is the preparer: it prepares the entries of each batch the
// reader hands over and passes the batch on to the fold, in order.
func (r *Runner) runPrepare(f *feed) {
	for b := range f.read {
		for i := range b.entries {
			r.prepare(&b.entries[i])
		}
		if !f.send(b) {
			return
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

package eventlog

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// TruncateBefore removes the entries of stream with a sequence below
// before, with a range deletion of the stream's keys and point deletions of
// their global copies and idempotency records, in one durable batch. It
// returns how many entries it removed. The stream's version does not
// change; reading a removed position then fails with ErrGone, and an event
// re-sent after its original was removed is appended again. A before above
// the head removes every entry. It holds the sequencer while it syncs, so
// appends wait for it.
func (l *Log) TruncateBefore(ctx context.Context, stream string, before uint64) (int, error) {
	return l.remove(ctx, stream, before, false)
}

// DeleteStream removes stream entirely: entries, idempotency records,
// snapshot and metadata. Afterwards the stream does not exist; appending
// to it starts again at version 1. It returns how many entries it removed.
func (l *Log) DeleteStream(ctx context.Context, stream string) (int, error) {
	return l.remove(ctx, stream, ^uint64(0), true)
}

func (l *Log) remove(ctx context.Context, stream string, before uint64, all bool) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := ValidateStream(stream); err != nil {
		return 0, err
	}
	if err := l.enter(); err != nil {
		return 0, err
	}
	defer l.leave()
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if err := l.failure(); err != nil {
		return 0, err
	}
	op := fmt.Sprintf("truncate %s before %d", stream, before)
	if all {
		op = "delete " + stream
	}
	m, ok := l.meta(stream)
	if !ok {
		return 0, fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	before = min(before, m.head+1)
	if before <= m.first && !all {
		return 0, nil
	}
	b := l.db.NewBatch()
	defer b.Close()
	removed, bytes, err := l.removeCopies(ctx, b, stream, m.first, before)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	lo, hi := streamBounds(stream)
	if all {
		_ = b.DeleteRange(lo, hi, nil)
		ilo, ihi := idemBounds(stream)
		_ = b.DeleteRange(ilo, ihi, nil)
		_ = b.Delete(metaKey(stream), nil)
		_ = b.Delete(snapshotKey(stream), nil)
	} else {
		_ = b.DeleteRange(lo, streamKey(stream, before), nil)
		m.first = before
		m.count -= min(m.count, uint64(removed))
		m.bytes -= min(m.bytes, bytes)
		_ = b.Set(metaKey(stream), encodeMeta(m), nil)
	}
	if err := l.write(func() error { return l.db.Apply(b, l.writeOpts) }); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	l.stateMu.Lock()
	if all {
		delete(l.streams, stream)
	} else {
		l.streams[stream] = m
	}
	l.stateMu.Unlock()
	return removed, nil
}

// removeCopies adds to b the deletion of the global copy and the
// idempotency record of each entry of stream in [first, before). A damaged
// entry's global copy cannot be found from it and stays (Verify reports
// it); everything else goes.
func (l *Log) removeCopies(ctx context.Context, b *pebble.Batch, stream string, first, before uint64) (removed int, bytes uint64, err error) {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: streamKey(stream, first), UpperBound: streamKey(stream, before)})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if removed%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return 0, 0, err
		}
		removed++
		bytes += uint64(len(v))
		h, err := checkValue(v)
		if err != nil {
			continue
		}
		_, id, source, err := decodeIdentity(v)
		if err != nil {
			continue
		}
		_ = b.Delete(globalKey(h.gseq), nil)
		_ = b.Delete(idemKey(stream, source, id), nil)
	}
	return removed, bytes, it.Error()
}

package eventlog

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// TruncateBefore removes the entries of stream with a sequence below
// before, with a range deletion of the stream's index and point deletions
// of their values and idempotency records, in one durable batch. It
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

// removeCopies adds to b the deletion of the value and the idempotency
// record of each entry of stream in [first, before), found through the
// stream's index (whose range the caller deletes). A damaged index entry
// names no value, which then stays (Verify reports it); a damaged value
// names no idempotency record, which then stays (a re-sent event is then
// taken for a duplicate of the removed one); everything else goes.
func (l *Log) removeCopies(ctx context.Context, b *pebble.Batch, stream string, first, before uint64) (removed int, bytes uint64, err error) {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: streamKey(stream, first), UpperBound: streamKey(stream, before)})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	glo, ghi := globalBounds()
	vals, err := it.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{LowerBound: glo, UpperBound: ghi}})
	if err != nil {
		return 0, 0, err
	}
	defer vals.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if removed%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
		}
		iv, err := it.ValueAndErr()
		if err != nil {
			return 0, 0, err
		}
		removed++
		gseq, ok := parseIndexValue(iv)
		if !ok {
			continue
		}
		v, ok, err := valueAt(vals, gseq)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			continue
		}
		bytes += uint64(len(v))
		_ = b.Delete(globalKey(gseq), nil)
		if _, id, source, err := decodeIdentity(v); err == nil {
			_ = b.Delete(idemKey(stream, source, id), nil)
		}
	}
	return removed, bytes, it.Error()
}

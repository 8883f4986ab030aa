package eventlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// layoutUpgrading is the layout key's value while upgrade runs: "from 1
// to 2". A build that reads only layout 1 refuses it (it is not [1]), so
// a half-upgraded log is never read as layout 1; this build finishes the
// upgrade.
var layoutUpgrading = []byte{layoutV1, layoutVersion}

// upgradeBatchEntries bounds the entries rewritten per batch, so that a
// batch stays a few MB whatever the log's size. A variable so that the
// crash tests can make a small log take several batches.
var upgradeBatchEntries = 4096

// upgradeBatchDone, when set (by the crash tests), is called after each
// batch the upgrade applies.
var upgradeBatchDone func()

// upgradeReport is what an upgrade did.
type upgradeReport struct {
	converted int // stream entries whose value became an index entry
	done      int // stream entries already converted by an earlier, interrupted run
	damaged   int // stream copies that fail their checks, left as they are
	repaired  int // values restored under their global key from the stream copy
}

// upgradeV1 rewrites a log in layout 1, where each entry's value is stored
// under its stream key and again under its global key, into layout 2,
// where the stream key holds only the global sequence. It runs at Open,
// before anything else reads or writes: the rewrite touches each stream
// entry once, in bounded batches, and says so in the log before it
// starts and as it goes (total is the number of entries the stream
// metadata counts, for the progress lines).
//
// Crash safety: the layout key is set to layoutUpgrading, synced, before
// the first change, and to layoutVersion, synced, after every other batch
// was synced. A kill at any point leaves either layout 1
// untouched or a log marked layoutUpgrading, whose entries are each
// either converted (an 8-byte value) or not (a full value, at least
// headerLen bytes): the next Open finishes the job from there.
//
// A stream copy that fails its checks is left as it is: reads then report
// that position damaged, as they did. A global copy that is missing or
// fails its checks while the stream copy is sound is replaced by the
// stream copy, since the stream copy is about to be dropped.
func (l *Log) upgradeV1(total uint64) (upgradeReport, error) {
	logger := l.logger().With("dir", l.dir)
	start := time.Now()
	logger.Info("event log: upgrading the key layout from 1 to 2 (each entry stored once): rewriting the stream index before the log opens; if it is interrupted, the next start finishes it",
		"entries", total)
	if err := l.db.Set(keyLayout, layoutUpgrading, pebble.Sync); err != nil {
		return upgradeReport{}, fmt.Errorf("upgrade the key layout from 1 to 2: mark the log: %w", err)
	}
	var rep upgradeReport
	next, hi := []byte{kindStream}, []byte{kindStream + 1}
	lastReport := start
	for next != nil {
		var err error
		if next, err = l.upgradeBatch(next, hi, &rep); err != nil {
			return rep, fmt.Errorf("upgrade the key layout from 1 to 2 (%d entries converted; run again to finish): %w", rep.converted+rep.done, err)
		}
		if time.Since(lastReport) >= 5*time.Second {
			lastReport = time.Now()
			logger.Info("event log: upgrading the key layout", "converted", rep.converted+rep.done, "of", total)
		}
	}
	if err := l.db.Set(keyLayout, []byte{layoutVersion}, pebble.Sync); err != nil {
		return rep, fmt.Errorf("upgrade the key layout from 1 to 2: mark the log done: %w", err)
	}
	attrs := []any{"converted", rep.converted, "already_converted", rep.done, "took", time.Since(start).Round(time.Millisecond)}
	if rep.damaged > 0 || rep.repaired > 0 {
		attrs = append(attrs, "damaged_left", rep.damaged, "repaired_from_stream_copy", rep.repaired)
		logger.Warn("event log: upgraded the key layout to 2; some entries were damaged: run jido-bus log verify", attrs...)
		return rep, nil
	}
	logger.Info("event log: upgraded the key layout to 2", attrs...)
	return rep, nil
}

// upgradeBatch converts up to upgradeBatchEntries stream entries from
// key lo on and commits them in one batch. It returns the key to go on
// from, nil when the stream keys are done.
func (l *Log) upgradeBatch(lo, hi []byte, rep *upgradeReport) ([]byte, error) {
	return l.rewriteBatch(lo, hi, func(b *pebble.Batch, key, v []byte, vals *pebble.Iterator) error {
		if len(v) == indexValueLen {
			rep.done++
			return nil
		}
		h, err := checkValue(v)
		if err != nil || h.gseq == 0 {
			rep.damaged++
			return nil
		}
		g, ok, err := valueAt(vals, h.gseq)
		if err != nil {
			return err
		}
		if !ok || !bytes.Equal(g, v) {
			if _, gerr := checkValue(g); !ok || gerr != nil {
				_ = b.Set(globalKey(h.gseq), v, nil)
				rep.repaired++
			}
		}
		_ = b.Set(key, binary.BigEndian.AppendUint64(nil, h.gseq), nil)
		rep.converted++
		return nil
	})
}

// rewriteBatch hands rewrite up to upgradeBatchEntries stream entries
// from key lo on, with an iterator over the values for it to look them
// up, and commits what it put in the batch, synced: one fsync per few
// thousand entries, so that what a crash interrupts is not done again.
// It returns the key to go on from, nil when the keys up to hi are done.
// Its iterators live for one batch only, so that the memtables a
// rewrite fills are not pinned.
func (l *Log) rewriteBatch(lo, hi []byte, rewrite func(b *pebble.Batch, key, v []byte, vals *pebble.Iterator) error) ([]byte, error) {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	glo, ghi := globalBounds()
	vals, err := it.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{LowerBound: glo, UpperBound: ghi}})
	if err != nil {
		return nil, err
	}
	defer vals.Close()
	b := l.db.NewBatch()
	defer b.Close()
	var next []byte
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		if n == upgradeBatchEntries {
			// The key after the last one rewritten: this one.
			next = append([]byte(nil), it.Key()...)
			break
		}
		n++
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, l.storageError(err)
		}
		if err := rewrite(b, it.Key(), v, vals); err != nil {
			return nil, l.storageError(err)
		}
	}
	if err := it.Error(); err != nil {
		return nil, l.storageError(err)
	}
	if !b.Empty() {
		if err := l.db.Apply(b, pebble.Sync); err != nil {
			return nil, err
		}
		if upgradeBatchDone != nil {
			upgradeBatchDone()
		}
	}
	return next, nil
}

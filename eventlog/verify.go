package eventlog

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	StreamEntries uint64 `json:"stream_entries"` // stream index entries checked
	GlobalEntries uint64 `json:"global_entries"` // stored values (global keys) checked
	// Damaged lists each damaged entry: by global sequence for a value
	// that fails its checks (with its stream position too when an index
	// entry names it), by stream and sequence for an index entry that
	// names no value or another entry's, and streams whose metadata
	// disagrees with their entries.
	Damaged []*CorruptError `json:"damaged"`
}

// OK reports whether nothing was found damaged.
func (r VerifyReport) OK() bool { return len(r.Damaged) == 0 }

// Verify reads every stored value and every stream index entry: it checks
// each value's checksum, decoding and key, that each value belongs to a
// retained position of a stream, that each index entry names a value
// holding that very position, and compares each stream's metadata with
// what it found. It does not stop at damage: the report lists every
// damaged entry, and all the others stay readable. progress, if not nil,
// is called every few thousand entries with the number checked so far.
// The returned error is for a failure to read at all (or ctx ending), not
// for damage.
func (l *Log) Verify(ctx context.Context, progress func(checked uint64)) (VerifyReport, error) {
	if err := l.enter(); err != nil {
		return VerifyReport{}, err
	}
	defer l.leave()
	// A snapshot taken under the sequencer and a copy of the metadata agree
	// with each other even while appends go on.
	l.commitMu.Lock()
	snap := l.db.NewSnapshot()
	l.stateMu.RLock()
	metas := maps.Clone(l.streams)
	l.stateMu.RUnlock()
	handedOut := l.lastGSeq
	l.commitMu.Unlock()
	defer snap.Close()
	v := verifier{l: l, metas: metas, handedOut: handedOut, progress: progress, ctx: ctx, counted: make(map[string]tally), bad: make(map[uint64]badValue)}
	if err := v.values(snap); err != nil {
		return v.r, err
	}
	if err := v.index(snap); err != nil {
		return v.r, err
	}
	for stream, m := range metas {
		if t := v.counted[stream]; t.count != m.count || t.bytes != m.bytes || t.values != m.count {
			reason := fmt.Sprintf("metadata says %d entries of %d bytes, found %d entries of %d bytes", m.count, m.bytes, t.count, t.bytes)
			if t.values != t.count {
				reason += fmt.Sprintf(" and %d values holding positions of the stream", t.values)
			}
			v.r.Damaged = append(v.r.Damaged, &CorruptError{Stream: stream, Reason: reason})
		}
	}
	if progress != nil {
		progress(v.checked)
	}
	slices.SortFunc(v.r.Damaged, func(a, b *CorruptError) int {
		if c := strings.Compare(a.Stream, b.Stream); c != 0 {
			return c
		}
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return cmp.Compare(a.GlobalSeq, b.GlobalSeq)
	})
	return v.r, nil
}

// verifier is the state of one Verify.
type verifier struct {
	l        *Log
	ctx      context.Context
	progress func(uint64)
	metas    map[string]streamMeta
	// handedOut is the last global sequence handed out when the snapshot
	// was taken: an index entry naming a higher one is damaged.
	handedOut uint64
	r         VerifyReport
	checked   uint64
	// counted tallies, per stream, the index entries and the bytes of the
	// values they name, and the sound values that hold a position of it.
	counted map[string]tally
	// bad holds the values found damaged, so that the index entry naming
	// one adds its stream position to the same report.
	bad map[uint64]badValue
}

type tally struct{ count, bytes, values uint64 }

type badValue struct {
	damage *CorruptError
	size   int
}

func (v *verifier) tick() error {
	v.checked++
	if v.checked%8192 == 0 {
		if v.progress != nil {
			v.progress(v.checked)
		}
		return v.ctx.Err()
	}
	return nil
}

// values checks every stored value: its checksum and decoding, that it
// holds the global sequence of its key, and that its stream position is
// retained (a value left behind by a removal reads in the global order
// although no stream holds it).
func (v *verifier) values(snap *pebble.Snapshot) error {
	lo, hi := globalBounds()
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	var d decoder
	for valid := it.First(); valid; valid = it.Next() {
		if err := v.tick(); err != nil {
			return err
		}
		v.r.GlobalEntries++
		gseq, ok := parseGlobalKey(it.Key())
		damage := &CorruptError{GlobalSeq: gseq}
		val, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("verify: read %s: %w", damage.Position(), v.l.storageError(err))
		}
		if !ok {
			damage.Reason = fmt.Sprintf("malformed global key %q", it.Key())
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		e, err := d.decode(val)
		if err == nil {
			err = agree(e, "", 0, gseq, true)
		}
		if err != nil {
			damage.Reason = err.Error()
			v.r.Damaged = append(v.r.Damaged, damage)
			v.bad[gseq] = badValue{damage: damage, size: len(val)}
			continue
		}
		if m, ok := v.metas[e.Stream]; !ok || e.Seq < m.first || e.Seq > m.head {
			damage.Stream, damage.Seq = e.Stream, e.Seq
			damage.Reason = "the value holds a position its stream does not retain (left behind by a truncation or deletion)"
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		t := v.counted[e.Stream]
		t.values++
		v.counted[e.Stream] = t
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("verify: %w", v.l.storageError(err))
	}
	return nil
}

// index checks every stream index entry: well formed, naming a stored
// value that holds its stream position.
func (v *verifier) index(snap *pebble.Snapshot) error {
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{kindStream}, UpperBound: []byte{kindStream + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	glo, ghi := globalBounds()
	vals, err := it.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{LowerBound: glo, UpperBound: ghi}})
	if err != nil {
		return err
	}
	defer vals.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if err := v.tick(); err != nil {
			return err
		}
		v.r.StreamEntries++
		key := it.Key()
		stream, seq, ok := parseStreamKey(key)
		damage := &CorruptError{Stream: stream, Seq: seq}
		if !ok {
			damage.Stream, damage.Seq = fmt.Sprintf("%q", key), 0
			damage.Reason = "malformed stream key"
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		iv, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("verify: read %s: %w", damage.Position(), v.l.storageError(err))
		}
		t := v.counted[stream]
		t.count++
		v.counted[stream] = t
		if _, ok := v.metas[stream]; !ok {
			damage.Reason = "index entry of a stream that has no metadata"
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		gseq, ok := parseIndexValue(iv)
		if !ok {
			damage.Reason = fmt.Sprintf("stream index entry is %d bytes, not a global sequence", len(iv))
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		if gseq > v.handedOut {
			damage.Reason = fmt.Sprintf("the stream index names global seq %d, above the last one handed out (%d)", gseq, v.handedOut)
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		if b, ok := v.bad[gseq]; ok {
			// The damaged value is reported once, now with the stream
			// position that names it.
			b.damage.Stream, b.damage.Seq = stream, seq
			t.bytes += uint64(b.size)
			t.values++
			v.counted[stream] = t
			continue
		}
		val, ok, err := valueAt(vals, gseq)
		if err != nil {
			return fmt.Errorf("verify: read %s (global seq %d): %w", damage.Position(), gseq, v.l.storageError(err))
		}
		if !ok {
			damage.Reason = fmt.Sprintf("the stream index names global seq %d, which holds no value", gseq)
			v.r.Damaged = append(v.r.Damaged, damage)
			continue
		}
		t.bytes += uint64(len(val))
		v.counted[stream] = t
		if p, ok := peek(val); !ok || p.stream != stream || p.seq != seq {
			damage.Reason = fmt.Sprintf("the stream index names global seq %d, which holds %s seq %d", gseq, p.stream, p.seq)
			v.r.Damaged = append(v.r.Damaged, damage)
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("verify: %w", v.l.storageError(err))
	}
	if err := vals.Error(); err != nil {
		return fmt.Errorf("verify: %w", v.l.storageError(err))
	}
	return nil
}

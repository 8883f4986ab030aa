package eventlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	StreamEntries uint64 `json:"stream_entries"` // stream keys checked
	GlobalEntries uint64 `json:"global_entries"` // global keys checked
	// Damaged lists each damaged entry: by stream and sequence for a
	// stream key, by global sequence for a global key, and streams whose
	// metadata disagrees with their entries.
	Damaged []*CorruptError `json:"damaged"`
}

// OK reports whether nothing was found damaged.
func (r VerifyReport) OK() bool { return len(r.Damaged) == 0 }

// Verify reads every entry (both copies), checks each checksum, decoding
// and key, and compares each stream's metadata with its entries. It does
// not stop at damage: the report lists every damaged entry, and all the
// others stay readable. progress, if not nil, is called every few thousand
// entries with the number checked so far. The returned error is for a
// failure to read at all (or ctx ending), not for damage.
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
	l.commitMu.Unlock()
	defer snap.Close()
	var r VerifyReport
	type tally struct{ count, bytes uint64 }
	counted := make(map[string]tally)
	checked := uint64(0)
	tick := func() error {
		checked++
		if checked%8192 == 0 {
			if progress != nil {
				progress(checked)
			}
			return ctx.Err()
		}
		return nil
	}
	for _, kind := range []byte{kindStream, kindGlobal} {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{kind}, UpperBound: []byte{kind + 1}})
		if err != nil {
			return r, err
		}
		var d decoder
		for valid := it.First(); valid; valid = it.Next() {
			if err := tick(); err != nil {
				it.Close()
				return r, err
			}
			damage := &CorruptError{}
			key := it.Key()
			var keyErr error
			if kind == kindStream {
				r.StreamEntries++
				stream, seq, ok := parseStreamKey(key)
				damage.Stream, damage.Seq = stream, seq
				if !ok {
					damage.Stream = fmt.Sprintf("%q", key)
					keyErr = errors.New("malformed stream key")
				}
			} else {
				r.GlobalEntries++
				gseq, ok := parseGlobalKey(key)
				damage.GlobalSeq = gseq
				if !ok {
					keyErr = fmt.Errorf("malformed global key %q", key)
				}
			}
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return r, fmt.Errorf("verify: read %s: %w", damage.Position(), l.storageError(err))
			}
			if keyErr != nil {
				damage.Reason = keyErr.Error()
				r.Damaged = append(r.Damaged, damage)
				continue
			}
			e, err := d.decode(v)
			if err == nil {
				if kind == kindStream {
					err = agree(e, damage.Stream, damage.Seq, false)
				} else {
					err = agree(e, "", damage.GlobalSeq, true)
				}
			}
			if err != nil {
				damage.Reason = err.Error()
				r.Damaged = append(r.Damaged, damage)
				if kind == kindStream {
					t := counted[damage.Stream]
					t.count++
					t.bytes += uint64(len(v))
					counted[damage.Stream] = t
				}
				continue
			}
			if kind == kindStream {
				t := counted[e.Stream]
				t.count++
				t.bytes += uint64(len(v))
				counted[e.Stream] = t
			}
		}
		err = it.Error()
		it.Close()
		if err != nil {
			return r, fmt.Errorf("verify: %w", l.storageError(err))
		}
	}
	for stream, m := range metas {
		if t := counted[stream]; t.count != m.count || t.bytes != m.bytes {
			r.Damaged = append(r.Damaged, &CorruptError{Stream: stream, Reason: fmt.Sprintf(
				"metadata says %d entries of %d bytes, found %d entries of %d bytes", m.count, m.bytes, t.count, t.bytes)})
		}
	}
	if progress != nil {
		progress(checked)
	}
	slices.SortFunc(r.Damaged, func(a, b *CorruptError) int {
		if c := strings.Compare(a.Stream, b.Stream); c != 0 {
			return c
		}
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return cmp.Compare(a.GlobalSeq, b.GlobalSeq)
	})
	return r, nil
}

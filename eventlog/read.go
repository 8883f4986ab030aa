package eventlog

import (
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"
	"github.com/jido-bus/jido-bus/bus"
)

// ReadOptions select entries of a stream or of the global log. The zero
// value reads everything retained, oldest first.
type ReadOptions struct {
	// From is the first sequence to read (a stream sequence for a stream,
	// a global sequence for the global log). Zero means the first retained.
	// With Backward it is the last sequence to read; zero means the head.
	From uint64
	// Limit is the most entries to yield (after filtering); zero means no
	// limit.
	Limit int
	// Backward reads newest first: Backward with Limit N reads the last N.
	Backward bool
	// Types is a bus pattern ("user.*", "audit.**"); only entries whose
	// event type matches it are yielded. Empty means every type.
	Types string
}

// ReadStream returns an iterator over the entries of stream. It streams
// from Pebble (never loading the stream), sees only durable entries, and
// holds a consistent snapshot while it runs. Each Entry is the caller's.
//
// The iterator yields a non-nil error with a zero Entry when it cannot
// start: an invalid stream name or pattern, an unknown stream (ErrNotFound),
// or a From before the first retained entry (*GoneError). A damaged entry
// yields a *CorruptError naming its position; the loop may continue past
// it to read the rest. A storage error ends the iteration.
func (l *Log) ReadStream(stream string, o ReadOptions) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		if err := ValidateStream(stream); err != nil {
			yield(Entry{}, err)
			return
		}
		pattern, err := compileTypes(o.Types)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		if err := l.enter(); err != nil {
			yield(Entry{}, err)
			return
		}
		defer l.leave()
		m, ok := l.meta(stream)
		if !ok {
			yield(Entry{}, fmt.Errorf("read %s: %w", stream, ErrNotFound))
			return
		}
		if !o.Backward && o.From != 0 && o.From < m.first {
			yield(Entry{}, &GoneError{Stream: stream, Seq: o.From, First: m.first})
			return
		}
		s := l.streamScan(stream, o.From, o.Backward)
		s.types = pattern
		limited(filtered(l.scan(s), pattern), o.Limit)(yield)
	}
}

// ReadAll returns an iterator over the global log in global-sequence
// order, with the same guarantees and errors as ReadStream. Entries removed
// by truncation or deletion are simply absent.
func (l *Log) ReadAll(o ReadOptions) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		pattern, err := compileTypes(o.Types)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		if err := l.enter(); err != nil {
			yield(Entry{}, err)
			return
		}
		defer l.leave()
		s := globalScan(o.From, o.Backward)
		s.types = pattern
		limited(filtered(l.scan(s), pattern), o.Limit)(yield)
	}
}

func compileTypes(types string) (*bus.Pattern, error) {
	if types == "" {
		return nil, nil
	}
	p, err := bus.CompilePattern(types)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// scanSpec describes one range scan: its bounds, where it starts and how
// a key names the entry it holds.
type scanSpec struct {
	lo, hi   []byte
	start    []byte // forward: SeekGE(start); backward: SeekLT(start); nil = First or Last
	backward bool
	// locate returns the position a key names, for error messages and for
	// checking that the value agrees with its key. seq is the key's own
	// sequence (stream seq or global seq).
	locate func(key []byte) (stream string, seq uint64, global bool)
	// indexed: the keys scanned are a stream's index entries, each naming
	// the global key that holds the entry's value.
	indexed bool
	// types, when set, lets the scan pass over an entry whose type it
	// does not match without decoding it: the entry's checksum is still
	// verified, and it is yielded as skipped, with its sequence only.
	types *bus.Pattern
}

func (l *Log) streamScan(stream string, from uint64, backward bool) scanSpec {
	lo, hi := streamBounds(stream)
	s := scanSpec{lo: lo, hi: hi, backward: backward, indexed: true, locate: func(k []byte) (string, uint64, bool) {
		return stream, binary.BigEndian.Uint64(k[len(k)-8:]), false
	}}
	switch {
	case !backward && from > 0:
		s.start = streamKey(stream, from)
	case backward && from > 0 && from < ^uint64(0):
		s.start = streamKey(stream, from+1)
	}
	return s
}

func globalScan(from uint64, backward bool) scanSpec {
	lo, hi := globalBounds()
	s := scanSpec{lo: lo, hi: hi, backward: backward, locate: func(k []byte) (string, uint64, bool) {
		return "", binary.BigEndian.Uint64(k[1:]), true
	}}
	switch {
	case !backward && from > 0:
		s.start = globalKey(from)
	case backward && from > 0 && from < ^uint64(0):
		s.start = globalKey(from + 1)
	}
	return s
}

// scanned is one stored entry met by a scan: its key's sequence, and the
// entry or why it could not be read. With scanSpec.types, an entry is
// skipped (its sequence only) or matched: the filter has been applied.
type scanned struct {
	seq     uint64
	entry   Entry
	err     error
	skipped bool
	matched bool
}

// drop reports whether a reader filtering by pattern drops s: skipped by
// the scan, or of another type (errors are never dropped).
func (s *scanned) drop(pattern *bus.Pattern) bool {
	return s.skipped || s.err == nil && !s.matched && pattern != nil && !pattern.Match(s.entry.Event.Type())
}

// scan walks s over the durable entries. It yields every stored entry,
// damaged ones as *CorruptError, and ends with a storage error if one
// occurs.
func (l *Log) scan(s scanSpec) iter.Seq[scanned] {
	return func(yield func(scanned) bool) {
		durable := l.Durable()
		it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: s.lo, UpperBound: s.hi})
		if err != nil {
			yield(scanned{err: err})
			return
		}
		defer it.Close()
		// A stream's values are under global keys: a second iterator over
		// the same state reads them, moving forward in the common case
		// (see valueAt).
		var vals *pebble.Iterator
		if s.indexed {
			glo, ghi := globalBounds()
			if vals, err = it.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{LowerBound: glo, UpperBound: ghi}}); err != nil {
				yield(scanned{err: err})
				return
			}
			defer vals.Close()
		}
		// Read after the iterator was made: no entry it sees is above it.
		handedOut := l.handedOut.Load()
		var valid bool
		switch {
		case !s.backward && s.start != nil:
			valid = it.SeekGE(s.start)
		case !s.backward:
			valid = it.First()
		case s.start != nil:
			valid = it.SeekLT(s.start)
		default:
			valid = it.Last()
		}
		var d decoder
		for ; valid; valid = s.next(it) {
			key := it.Key()
			stream, seq, global := s.locate(key)
			v, err := it.ValueAndErr()
			if err != nil {
				yield(scanned{seq: seq, err: fmt.Errorf("read %s: %w", describe(stream, seq, global), l.storageError(err))})
				return
			}
			gseq := seq
			if s.indexed {
				var ok bool
				if gseq, ok = parseIndexValue(v); !ok {
					ce := &CorruptError{Stream: stream, Seq: seq, Reason: fmt.Sprintf("stream index entry is %d bytes, not a global sequence", len(v))}
					if !yield(scanned{seq: seq, entry: Entry{Stream: stream, Seq: seq}, err: ce}) {
						return
					}
					continue
				}
				if gseq > handedOut {
					ce := &CorruptError{Stream: stream, Seq: seq, Reason: fmt.Sprintf("the stream index names global seq %d, above the last one handed out (%d)", gseq, handedOut)}
					if !yield(scanned{seq: seq, entry: Entry{Stream: stream, Seq: seq}, err: ce}) {
						return
					}
					continue
				}
				if gseq > durable {
					// Committed but not yet synced: invisible until it is.
					if s.backward {
						continue
					}
					return
				}
				if v, ok, err = valueAt(vals, gseq); err != nil {
					yield(scanned{seq: seq, err: fmt.Errorf("read %s (global seq %d): %w", describe(stream, seq, global), gseq, l.storageError(err))})
					return
				} else if !ok {
					ce := &CorruptError{Stream: stream, Seq: seq, Reason: fmt.Sprintf("the stream index names global seq %d, which holds no value", gseq)}
					if !yield(scanned{seq: seq, entry: Entry{Stream: stream, Seq: seq}, err: ce}) {
						return
					}
					continue
				}
			}
			e, skipped, matched, err := s.decode(&d, v, stream, seq, gseq, global)
			if skipped != 0 {
				if skipped > durable {
					if s.backward {
						continue
					}
					return
				}
				if !yield(scanned{seq: seq, skipped: true}) {
					return
				}
				continue
			}
			if err == nil {
				err = agree(e, stream, seq, gseq, global)
			}
			if err != nil {
				ce := &CorruptError{Stream: stream, Seq: seq, Reason: err.Error()}
				if global {
					ce.Seq, ce.GlobalSeq = 0, seq
				}
				if !yield(scanned{seq: seq, entry: Entry{Stream: ce.Stream, Seq: ce.Seq, GlobalSeq: ce.GlobalSeq}, err: ce}) {
					return
				}
				continue
			}
			if e.GlobalSeq > durable {
				// Committed but not yet synced: invisible until it is.
				if s.backward {
					continue
				}
				return
			}
			if !yield(scanned{seq: seq, entry: e, matched: matched}) {
				return
			}
		}
		if err := it.Error(); err != nil {
			yield(scanned{err: fmt.Errorf("read: %w", l.storageError(err))})
		}
	}
}

// decode decodes the value v met at a key naming stream and seq. With a
// type filter, an entry it drops is passed over once its checksum and
// position check out: decode then returns its global sequence as skipped
// and nothing else; one it keeps comes back matched. Anything else is
// decoded, which reports the damage.
func (s scanSpec) decode(d *decoder, v []byte, stream string, seq, gseq uint64, global bool) (e Entry, skipped uint64, matched bool, err error) {
	if s.types == nil {
		e, err = d.decode(v)
		return e, 0, false, err
	}
	p, ok := peek(v)
	if !ok || !p.agrees(stream, seq, gseq, global) {
		e, err = d.decode(v)
		return e, 0, false, err
	}
	if !s.types.Match(p.typ) {
		return Entry{}, p.gseq, false, nil
	}
	e, err = d.decodeChecked(v, p.valueHeader) // the checksum is verified
	return e, 0, err == nil, err
}

func (s scanSpec) next(it *pebble.Iterator) bool {
	if s.backward {
		return it.Prev()
	}
	return it.Next()
}

// agree checks that a decoded value belongs under the key it was read
// from (global sequence gseq) and, read through a stream's index, to the
// stream position that named it; a value copied under the wrong key, or
// an index entry naming another entry's value, is as damaged as a bad
// checksum.
func agree(e Entry, stream string, seq, gseq uint64, global bool) error {
	if e.GlobalSeq != gseq {
		return fmt.Errorf("value holds global seq %d", e.GlobalSeq)
	}
	if global {
		return nil
	}
	if e.Seq != seq || e.Stream != stream {
		return fmt.Errorf("the stream index names global seq %d, which holds %s seq %d", gseq, e.Stream, e.Seq)
	}
	return nil
}

// agrees is agree for a peeked value.
func (p peeked) agrees(stream string, seq, gseq uint64, global bool) bool {
	if p.gseq != gseq {
		return false
	}
	return global || p.seq == seq && p.stream == stream
}

// valueAt positions vals, an iterator over the global keys, at the value
// of global sequence gseq and returns it (valid until vals moves); ok is
// false when no value is stored there. A stream read asks for increasing
// global sequences: the next key is stepped to (an agent's signal and its
// cmd record are written together, one after the other), a farther one
// sought, which Pebble does from the current position when it can
// (TrySeekUsingNext) — so a stream whose entries were written together
// reads sequentially.
func valueAt(vals *pebble.Iterator, gseq uint64) (v []byte, ok bool, err error) {
	var valid bool
	if cur, at := currentGSeq(vals); at && cur+1 == gseq {
		valid = vals.Next()
	} else {
		var key [9]byte
		valid = vals.SeekGE(appendGlobalKey(key[:0], gseq))
	}
	if !valid {
		return nil, false, vals.Error()
	}
	if got, _ := parseGlobalKey(vals.Key()); got != gseq {
		return nil, false, nil
	}
	v, err = vals.ValueAndErr()
	return v, err == nil, err
}

func currentGSeq(it *pebble.Iterator) (uint64, bool) {
	if !it.Valid() {
		return 0, false
	}
	return parseGlobalKey(it.Key())
}

func describe(stream string, seq uint64, global bool) string {
	if global {
		return fmt.Sprintf("global seq %d", seq)
	}
	return fmt.Sprintf("%s seq %d", stream, seq)
}

// filtered drops entries whose type does not match pattern (nil: none).
// Errors pass through.
func filtered(src iter.Seq[scanned], pattern *bus.Pattern) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for s := range src {
			if s.drop(pattern) {
				continue
			}
			if !yield(s.entry, s.err) {
				return
			}
		}
	}
}

// limited stops after limit entries (zero: no limit); errors do not count.
func limited(src iter.Seq2[Entry, error], limit int) iter.Seq2[Entry, error] {
	if limit <= 0 {
		return src
	}
	return func(yield func(Entry, error) bool) {
		n := 0
		for e, err := range src {
			if !yield(e, err) {
				return
			}
			if err == nil {
				n++
				if n >= limit {
					return
				}
			}
		}
	}
}

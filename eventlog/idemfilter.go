package eventlog

import (
	"errors"
	"hash/maphash"
	"math/bits"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// idemFilter is a blocked Bloom filter over idempotency keys. It lets an
// append skip the Pebble lookup of an event that is certainly new, which
// is nearly every event: without it that lookup (a miss through the
// memtables and every level) was the largest cost the sequencer paid per
// event.
//
// The filter never answers "absent" for a key it was given, however full
// it is: fullness only raises the rate of false "maybe" answers, each of
// which costs the Pebble lookup the filter would have saved. Keys are
// never removed: a key whose record was truncated or deleted stays a
// "maybe", and the lookup then finds it gone.
//
// Each key sets filterProbes bits inside one 512-bit block (one cache
// line), so a query touches one line. Bits are set atomically because a
// filter being built takes keys both from its builder and from the
// sequencer; queries run under commitMu.
type idemFilter struct {
	words    []atomic.Uint64 // 8 words per block
	blockLog uint            // log2 of the number of blocks
	capacity uint64          // keys it holds at filterBitsPerKey
	keys     atomic.Uint64   // keys added, removed ones included
}

const (
	filterBitsPerKey = 16
	filterProbes     = 7 // 7 × 9 bits of one mixed hash
	filterBlockBytes = 64
	// filterMinBytes is the size of the filter of a new or small log.
	filterMinBytes = 64 << 10
)

// newIdemFilter returns a filter for keys keys: the power-of-two size of
// at least filterBitsPerKey bits per key, between filterMinBytes and
// maxBytes (but at least one block).
func newIdemFilter(keys uint64, maxBytes int64) *idemFilter {
	size := filterSize(keys, maxBytes)
	blocks := size / filterBlockBytes
	return &idemFilter{
		words:    make([]atomic.Uint64, blocks*8),
		blockLog: uint(bits.TrailingZeros64(blocks)),
		capacity: size * 8 / filterBitsPerKey,
	}
}

// filterSize is the size in bytes of newIdemFilter(keys, maxBytes).
func filterSize(keys uint64, maxBytes int64) uint64 {
	size := uint64(filterMinBytes)
	for size < keys*filterBitsPerKey/8 && size < 1<<40 {
		size <<= 1
	}
	for size > uint64(max(maxBytes, filterBlockBytes)) {
		size >>= 1
	}
	return size
}

// sizeBytes is the memory the filter's bits take.
func (f *idemFilter) sizeBytes() int64 { return int64(len(f.words)) * 8 }

// full reports whether the filter holds more keys than it was sized for.
func (f *idemFilter) full() bool { return f.keys.Load() > f.capacity }

// locate returns the first word of h's block and the mixed bits that pick
// the probes.
func (f *idemFilter) locate(h uint64) (block int, mix uint64) {
	block = 0
	if f.blockLog > 0 {
		block = int(h>>(64-f.blockLog)) * 8
	}
	// A finaliser (MurmurHash3's) so that the probes do not repeat the
	// bits that chose the block.
	mix = h ^ h>>33
	mix *= 0xff51afd7ed558ccd
	mix ^= mix >> 33
	mix *= 0xc4ceb9fe1a85ec53
	mix ^= mix >> 33
	return block, mix
}

func (f *idemFilter) add(h uint64) {
	block, mix := f.locate(h)
	for range filterProbes {
		bit := mix & 511
		f.words[block+int(bit>>6)].Or(1 << (bit & 63))
		mix >>= 9
	}
	f.keys.Add(1)
}

// mayContain reports false only for a hash that was never added.
func (f *idemFilter) mayContain(h uint64) bool {
	block, mix := f.locate(h)
	for range filterProbes {
		bit := mix & 511
		if f.words[block+int(bit>>6)].Load()&(1<<(bit&63)) == 0 {
			return false
		}
		mix >>= 9
	}
	return true
}

// hashIdem hashes an idempotency key for the filters of l.
func (l *Log) hashIdem(idem []byte) uint64 { return maphash.Bytes(l.idemSeed, idem) }

// mayHaveIdem reports whether the idempotency key with hash h may be in
// the database; false is certain. Under commitMu.
func (l *Log) mayHaveIdem(h uint64) bool {
	return l.filter == nil || l.filter.mayContain(h)
}

// addIdem records a committed idempotency key in the filters. Under
// commitMu, after the batch holding it is applied.
func (l *Log) addIdem(h uint64) {
	if l.filter != nil {
		l.filter.add(h)
	}
	if l.building != nil {
		l.building.add(h)
	}
}

// startFirstFilter begins building the first filter, sized for the keys
// the log holds now, unless it has begun already. The sequencer calls it
// before the first append, so that reading a log never pays for the scan;
// until that build ends every new event is looked up, as it was when the
// build began at Open. Under commitMu.
func (l *Log) startFirstFilter() {
	if l.filterStarted {
		return
	}
	l.filterStarted = true
	var keys uint64
	for _, m := range l.streams {
		keys += m.count
	}
	l.startFilterBuild(2 * keys)
}

// startFilterBuild begins building a filter for keys keys in the
// background, unless one is being built, filtering is off, or the new one
// would not be larger than the current one. Until the build ends the
// current filter (or none: every new event is looked up) stays in use.
//
// The builder scans the idempotency keys of a snapshot taken here, under
// commitMu; every key committed after the snapshot reaches the new filter
// through addIdem. So when it is installed it holds every key in the
// database. Under commitMu.
func (l *Log) startFilterBuild(keys uint64) {
	if l.building != nil || l.opts.IdempotencyFilterBytes < 0 {
		return
	}
	if l.filter != nil && int64(filterSize(keys, l.opts.filterBytes())) <= l.filter.sizeBytes() {
		return // at its bound: it stays, with more false alarms
	}
	f := newIdemFilter(keys, l.opts.filterBytes())
	l.building = f
	snap := l.db.NewSnapshot()
	l.bg.Go(func() { l.buildFilter(f, snap) })
}

// buildFilter fills f from the idempotency keys in snap and installs it.
// It gives up, leaving the filter in use unchanged, when the Log closes or
// the scan fails.
func (l *Log) buildFilter(f *idemFilter, snap *pebble.Snapshot) {
	err := scanIdemKeys(snap, l.done, func(k []byte) { f.add(l.hashIdem(k)) })
	_ = snap.Close()
	l.commitMu.Lock()
	if l.building == f {
		l.building = nil
		if err == nil {
			l.filter = f
		}
	}
	l.commitMu.Unlock()
	if err != nil && !errors.Is(err, ErrClosed) {
		l.logger().Warn("eventlog: building the idempotency filter failed; every new event is looked up in Pebble",
			"error", err)
	}
}

// scanIdemKeys calls add with every idempotency key in snap; it stops
// with ErrClosed once done is closed.
func scanIdemKeys(snap *pebble.Snapshot, done <-chan struct{}, add func([]byte)) error {
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{kindIdem}, UpperBound: []byte{kindIdem + 1}})
	if err != nil {
		return err
	}
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		if n++; n%4096 == 0 {
			select {
			case <-done:
				_ = it.Close()
				return ErrClosed
			default:
			}
		}
		add(it.Key())
	}
	return errors.Join(it.Error(), it.Close())
}

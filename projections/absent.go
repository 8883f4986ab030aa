package projections

import "hash/maphash"

// absentBits is the size of an absent filter: 128 KiB, which answers for
// about 100,000 keys with 1% false positives, and degrades (to asking the
// Store every time, as without a filter) rather than grows past that.
const absentBits = 1 << 20

// absent is a Bloom filter of the state keys a Runner has written for a
// projection since its range of the Store was empty (a rebuild, or a
// projection with no checkpoint position yet). A key it does not hold has
// no stored state, so the Runner starts it from Init without a Pebble
// lookup: a rebuild meets every key for the first time, and a lookup that
// finds nothing costs Pebble several microseconds. Every key the Runner
// writes is added before its write commits, so the filter holds a superset
// of the stored keys for as long as the Runner lives, whatever fails.
type absent struct {
	seed maphash.Seed
	bits []uint64
}

func newAbsent() *absent {
	return &absent{seed: maphash.MakeSeed(), bits: make([]uint64, absentBits/64)}
}

// add records that key may have a stored state.
func (a *absent) add(key string) {
	h1, h2 := a.hashes(key)
	for i := range uint64(4) {
		b := (h1 + i*h2) % absentBits
		a.bits[b/64] |= 1 << (b % 64)
	}
}

// has reports whether key may have a stored state; false is certain.
func (a *absent) has(key string) bool {
	h1, h2 := a.hashes(key)
	for i := range uint64(4) {
		b := (h1 + i*h2) % absentBits
		if a.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// hashes derives the filter's probes by double hashing one 64-bit hash.
func (a *absent) hashes(key string) (h1, h2 uint64) {
	h := maphash.String(a.seed, key)
	return h & 0xffffffff, h>>32 | 1
}

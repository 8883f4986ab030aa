package eventlog

import (
	"encoding/binary"
)

// Key kinds: the first byte of every key (see the package doc).
const (
	kindLog      = 'L'
	kindStream   = 'S'
	kindGlobal   = 'G'
	kindIdem     = 'I'
	kindMeta     = 'M'
	kindSnapshot = 'P'
)

// layoutVersion is the key layout this package writes and reads (see the
// package doc). Open upgrades a directory in layout 1 to it (upgrade.go)
// and refuses any other.
const (
	layoutVersion = 2
	// layoutV1 stored each entry's value twice, under its stream key and
	// under its global key.
	layoutV1 = 1
)

// FormatVersion is the on-disk format of the log this build writes (its
// key layout). Open upgrades a log in an older format in place and
// refuses one written by a newer build.
const FormatVersion = layoutVersion

// The log's own keys: kindLog, then a name.
var (
	keyLayout   = append([]byte{kindLog}, "format"...)
	keyLastGSeq = append([]byte{kindLog}, "gseq"...)
)

// streamKey returns 'S' stream 0x00 seq, the key of a stream's index
// entry: its value is the entry's global sequence (indexValueLen bytes).
func streamKey(stream string, seq uint64) []byte {
	return appendStreamKey(make([]byte, 0, len(stream)+10), stream, seq)
}

func appendStreamKey(k []byte, stream string, seq uint64) []byte {
	k = append(k, kindStream)
	k = append(k, stream...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// streamBounds returns the key range [lo, hi) holding every entry of stream.
func streamBounds(stream string) (lo, hi []byte) {
	lo = append(append([]byte{kindStream}, stream...), 0)
	hi = append(append([]byte{kindStream}, stream...), 1)
	return lo, hi
}

// parseStreamKey splits a stream key; ok is false for a key of another
// shape.
func parseStreamKey(k []byte) (stream string, seq uint64, ok bool) {
	if len(k) < 10 || k[0] != kindStream || k[len(k)-9] != 0 {
		return "", 0, false
	}
	return string(k[1 : len(k)-9]), binary.BigEndian.Uint64(k[len(k)-8:]), true
}

// indexValueLen is the size of a stream index value: the global sequence
// of the entry, 8 bytes big-endian.
const indexValueLen = 8

// parseIndexValue returns the global sequence a stream index value names;
// ok is false for a value of another size or naming global sequence 0.
func parseIndexValue(v []byte) (gseq uint64, ok bool) {
	if len(v) != indexValueLen {
		return 0, false
	}
	gseq = binary.BigEndian.Uint64(v)
	return gseq, gseq != 0
}

// globalKey returns 'G' gseq, the key under which an entry's value is
// stored (its only copy).
func globalKey(gseq uint64) []byte { return appendGlobalKey(make([]byte, 0, 9), gseq) }

func appendGlobalKey(k []byte, gseq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(k, kindGlobal), gseq)
}

func globalBounds() (lo, hi []byte) { return []byte{kindGlobal}, []byte{kindGlobal + 1} }

func parseGlobalKey(k []byte) (gseq uint64, ok bool) {
	if len(k) != 9 || k[0] != kindGlobal {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// idemKey identifies an event by CloudEvents source and id within stream.
// The source is length-prefixed so that no source/id pair can collide with
// another whatever bytes they hold.
func idemKey(stream, source, id string) []byte {
	return appendIdemKey(make([]byte, 0, idemKeyLen(stream, source, id)), stream, source, id)
}

// idemKeyLen is an upper bound of the length of an idempotency key.
func idemKeyLen(stream, source, id string) int {
	return len(stream) + len(source) + len(id) + 2 + binary.MaxVarintLen64
}

func appendIdemKey(k []byte, stream, source, id string) []byte {
	k = append(k, kindIdem)
	k = append(k, stream...)
	k = append(k, 0)
	k = binary.AppendUvarint(k, uint64(len(source)))
	k = append(k, source...)
	return append(k, id...)
}

func idemBounds(stream string) (lo, hi []byte) {
	lo = append(append([]byte{kindIdem}, stream...), 0)
	hi = append(append([]byte{kindIdem}, stream...), 1)
	return lo, hi
}

func metaKey(stream string) []byte { return appendMetaKey(make([]byte, 0, len(stream)+1), stream) }

func appendMetaKey(k []byte, stream string) []byte { return append(append(k, kindMeta), stream...) }

func metaBounds() (lo, hi []byte) { return []byte{kindMeta}, []byte{kindMeta + 1} }

func snapshotKey(stream string) []byte { return append([]byte{kindSnapshot}, stream...) }

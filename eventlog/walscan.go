package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Damage in the newest WAL, found chunk by chunk before Pebble opens.
//
// Pebble tolerates an unreadable chunk in the newest WAL as a torn tail
// unless a later chunk's recorded synced offset lies beyond it. That
// offset undercounts: Pebble's WAL writer (record.LogWriter's flush loop,
// v2.1.7) adds to it only the bytes it flushes from the block being
// filled, not the full 32 KiB blocks it flushes before them. With small
// records almost every byte passes through the block being filled and the
// count stays close; a record of more than a block (an entry over about
// 20 KiB in layout 2, 10 KiB in layout 1, which stored it twice) goes
// mostly through full blocks, and
// the count lags far behind the file (at the end of a 1.5 MB WAL of
// 16 KiB entries it said 0.43 MB). Damage in the middle then reads as a
// torn tail: replay stops there and the acknowledged entries after it are
// gone without a word.
//
// So Open reads the newest WAL itself first (scanNewestWAL), as Pebble's
// replay does, to the first chunk the replay would stop at, and then looks
// past it for proof that the chunk had been synced, which a torn write
// never was. Any one of these proves it:
//
//   - the end-of-log chunk a clean close writes (after syncing everything)
//     lies after it;
//   - a later valid chunk of the same log records a synced offset beyond
//     it (the offset undercounts, so it is a lower bound);
//   - later valid chunks of the same log carry three different synced
//     offsets. Each chunk carries the value the last completed sync
//     stored; syncs run one at a time, and each covers everything written
//     before it began. The chunk with the first value was written after
//     the damaged one, so the sync that stored the second value ended
//     after that, and the sync that stored the third began after it
//     ended: after the damaged chunk was written, which it covered.
//
// And, whatever the synced offsets say:
//
//   - a valid chunk of this log lies after garbled bytes (neither zeroes
//     nor a chunk of another log). A crash cuts a WAL short, or (a power
//     loss, the later of two unsynced writes reaching the disk first)
//     leaves a hole that reads as zeroes or as a recycled file's stale
//     chunks; it never writes bytes that were not written. This is the
//     proof for a WAL without synced offsets (the recyclable format, which
//     Pebble writes the first WAL of a new directory in: see
//     ensureWALSyncOffsets) and for damage to the last records.
//
// Past a chunk whose header is damaged the frame is lost; the scan then
// looks for the next valid chunk byte by byte, in the same block and
// after it (a match by chance needs the log's number and a CRC-32C over
// the header and payload to agree).
//
// A chunk is valid when its checksum matches and it carries this log's
// number (a recycled file's stale chunks carry another). Without proof
// the end is a torn tail: a crash (kill -9 or power loss) can leave
// unsynced data after a hole, and the unsynced data was never
// acknowledged. The blind spot: after a crash (no clean close), damage to
// the last record (nothing valid after it), or zeroes over one of the
// last two or three (too few syncs after them to prove anything), still
// reads as a torn tail.

// The chunk format of Pebble's record package (record/record.go, the wire
// format its doc comment describes): a file is a run of 32 KiB blocks,
// each a run of chunks; a chunk never crosses a block, and fewer than a
// header's bytes at a block's end are zeroes. A chunk's header holds a
// checksum (uint32, the masked CRC-32C of the chunk's type byte, the rest
// of its header and its payload), the payload's length (uint16) and its
// type (byte), then in the recyclable and WAL-sync formats the log's
// number (uint32, low 32 bits), and in the WAL-sync format the synced
// offset (uint64). All little-endian.
const (
	walBlockSize      = 32 << 10
	walLegacyHeader   = 7
	walRecycleHeader  = 11
	walSyncHeader     = 19
	walMaxChunkType   = 12
	walTrailerType    = 5 // a recyclable full chunk, as the end-of-log chunk is written
	walChecksumOffset = 6 // the checksum covers the header from here on, and the payload
)

// walChecksum is the masked CRC-32C that chunks carry (the LevelDB
// masking: rotate right by 15 bits, add a constant).
func walChecksum(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// walChunk is one chunk header read from a block.
type walChunk struct {
	kind   byte
	header int // header bytes: 7, 11 or 19
	length int // payload bytes
	logNum uint32
	synced uint64 // the WAL-sync format only
	hasNum bool   // the recyclable and WAL-sync formats
}

func (c walChunk) size() int { return c.header + c.length }

// position is where the chunk sits in its record.
func (c walChunk) first() bool { return (c.kind-1)%4 <= 1 } // full or first
func (c walChunk) last() bool  { return (c.kind-1)%4 == 0 || (c.kind-1)%4 == 3 }

// chunkVerdict says what the replay makes of the bytes at a position.
type chunkVerdict int

const (
	chunkValid   chunkVerdict = iota
	chunkPadding              // zeroes to the end of the block: the next block follows
	chunkOther                // a header with the next log's number (the end-of-log chunk)
	chunkBad                  // anything else stops the replay
)

// parseChunk reads the chunk at b[pos:], b being a block's bytes, for the
// log numbered num. framed says whether the header was whole and its
// payload within the block (so that the next chunk's place is known, even
// when the checksum fails).
func parseChunk(b []byte, pos int, num uint32) (c walChunk, v chunkVerdict, framed bool, why string) {
	sum := binary.LittleEndian.Uint32(b[pos:])
	c.length = int(binary.LittleEndian.Uint16(b[pos+4:]))
	c.kind = b[pos+6]
	if sum == 0 && c.length == 0 && c.kind == 0 {
		// Zeroes are padding only where no header fits; elsewhere they are
		// what a preallocated file holds past the last write.
		rest := b[pos:]
		if len(rest) < walRecycleHeader || (len(rest) < walSyncHeader && allZero(rest)) {
			return c, chunkPadding, false, ""
		}
		return c, chunkBad, false, "zeroed chunk"
	}
	switch {
	case c.kind == 0 || c.kind > walMaxChunkType:
		return c, chunkBad, false, fmt.Sprintf("unknown chunk type %d", c.kind)
	case c.kind <= 4:
		c.header = walLegacyHeader
	case c.kind <= 8:
		c.header, c.hasNum = walRecycleHeader, true
	default:
		c.header, c.hasNum = walSyncHeader, true
	}
	if pos+c.header > len(b) {
		return c, chunkBad, false, "chunk header cut by the block's end"
	}
	if c.hasNum {
		c.logNum = binary.LittleEndian.Uint32(b[pos+7:])
		if c.header == walSyncHeader {
			c.synced = binary.LittleEndian.Uint64(b[pos+11:])
		}
		if c.logNum != num {
			if c.logNum == num+1 {
				return c, chunkOther, false, ""
			}
			return c, chunkBad, false, fmt.Sprintf("chunk of another log (%d)", c.logNum)
		}
	}
	if pos+c.size() > len(b) {
		return c, chunkBad, false, "chunk length runs past the block's end"
	}
	if walChecksum(b[pos+walChecksumOffset:pos+c.size()]) != sum {
		return c, chunkBad, true, "checksum mismatch"
	}
	return c, chunkValid, true, ""
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// isTrailer says whether c, found where a chunk begins, is the end-of-log
// chunk a clean close of log num writes: a recyclable full chunk with no
// payload, no checksum and the next log's number.
func isTrailer(b []byte, pos int, c walChunk, num uint32) bool {
	return c.kind == walTrailerType && c.length == 0 && c.logNum == num+1 &&
		binary.LittleEndian.Uint32(b[pos:]) == 0
}

// walStop is where a replay of one WAL file stops before its clean end.
type walStop struct {
	records int    // the whole records the replay reads before it
	record  int64  // where the record holding the chunk begins
	chunk   int64  // the chunk the replay stops at
	reason  string // what is wrong with it
	proof   string // why it is not a torn tail; empty when nothing proves it

	// garbled says the damaged bytes are neither zeroes nor another log's
	// chunk, the two things a crash can leave before a later write that
	// reached the disk first. Any valid chunk after garbled bytes proves
	// damage.
	garbled bool

	// What lookPast saw of the synced offsets past the chunk: how many
	// different values, and the last.
	syncs    int
	lastSync uint64
}

// scanWALFile reads the WAL file r, written for log num, as Pebble's
// replay does and returns where the replay stops before the file's clean
// end, or nil if it reads to the end. It reads past that point only as
// far as it needs to find proof (see above).
func scanWALFile(r io.Reader, num uint32) (*walStop, error) {
	buf := make([]byte, walBlockSize)
	boundary := true // between records: the next chunk must begin one
	var start int64  // where the current record began
	records := 0     // whole records read
	var stop *walStop
	for block := int64(0); ; block++ {
		n, err := io.ReadFull(r, buf)
		if errors.Is(err, io.EOF) {
			if stop == nil && !boundary {
				stop = &walStop{records: records, record: start, chunk: block * walBlockSize, reason: "the file ends inside a record"}
			}
			return stop, nil
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		b := buf[:n]
		if stop != nil {
			if stop.proof = stop.lookPast(b, 0, block, num); stop.proof != "" {
				return stop, nil
			}
			continue
		}
		for pos := 0; ; {
			if pos+walLegacyHeader > n {
				if n == walBlockSize {
					break // the rest of a full block is padding
				}
				if boundary && pos == n {
					return nil, nil // the clean end of the last block
				}
				return &walStop{records: records, record: start, chunk: block*walBlockSize + int64(pos), reason: "the file ends inside a record"}, nil
			}
			c, v, framed, why := parseChunk(b, pos, num)
			at := block*walBlockSize + int64(pos)
			switch v {
			case chunkPadding:
				pos = n
				continue
			case chunkOther:
				if boundary {
					return nil, nil // the end-of-log chunk
				}
				why = "end of the log inside a record"
			case chunkValid:
				inRecord := !boundary
				switch {
				case inRecord:
					boundary = c.last()
				case c.first():
					start, boundary = at, c.last()
				}
				// The replay skips a middle or last chunk where a record
				// should begin; so does the scan.
				if boundary && (inRecord || c.first()) {
					records++
				}
				pos += c.size()
				continue
			}
			stop = &walStop{records: records, record: at, chunk: at, reason: why, garbled: garbled(v, c, num, why)}
			if !boundary {
				stop.record = start
			}
			next := pos + 1 // past a chunk whose frame is in doubt, look for the next valid one
			if framed {
				next = pos + c.size()
			}
			if stop.proof = stop.lookPast(b, next, block, num); stop.proof != "" {
				return stop, nil
			}
			break
		}
	}
}

// garbled says whether the bad chunk parseChunk found (verdict v, reason
// why) is garbled bytes rather than what a crash leaves where a write
// never landed: zeroes (a hole, a preallocated file) or a chunk of another
// log (a recycled file's stale contents). A crash only ever cuts a WAL
// short or leaves such a hole; it does not write bytes that were never
// written, so garbled bytes are damage whenever a valid chunk follows.
func garbled(v chunkVerdict, c walChunk, num uint32, why string) bool {
	return v == chunkBad && why != "zeroed chunk" && !(c.hasNum && c.logNum != num)
}

// lookPast looks for proof, in block b from pos on, that the chunk the
// replay stops at had been synced; it keeps what it saw of the synced
// offsets in s. It returns the proof, or "" when the block holds none.
// Where the block cannot be framed (more damage, or a frame lost with a
// damaged header) it looks for the next valid chunk of this log byte by
// byte: a checksum over the header and the payload, with the log's
// number, does not match by chance.
func (s *walStop) lookPast(b []byte, pos int, block int64, num uint32) string {
	for pos+walLegacyHeader <= len(b) {
		c, v, _, _ := parseChunk(b, pos, num)
		at := block*walBlockSize + int64(pos)
		switch {
		case v == chunkOther && isTrailer(b, pos, c, num):
			return fmt.Sprintf("the log was closed cleanly after it (end-of-log chunk at offset %d)", at)
		case v != chunkValid || !c.hasNum:
			pos++ // resynchronise on the next valid chunk of this log
			continue
		case s.garbled:
			return fmt.Sprintf("a valid chunk of this log follows it at offset %d (a crash cuts a log short, it does not garble it)", at)
		case c.header == walSyncHeader:
			if int64(c.synced) > s.chunk {
				return fmt.Sprintf("the chunk at offset %d was written after the file was synced to offset %d", at, c.synced)
			}
			if s.syncs == 0 || c.synced != s.lastSync {
				s.syncs++
				s.lastSync = c.synced
			}
			if s.syncs >= 3 {
				return fmt.Sprintf("the chunk at offset %d was written after two syncs that followed it", at)
			}
		}
		pos += c.size()
	}
	return ""
}

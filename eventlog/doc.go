// Package eventlog is the durable, append-only log of jido-bus: named
// streams of CloudEvents in a Pebble database, with expected-version
// appends, idempotency, group commit, reads, live subscriptions, snapshots
// and retention.
//
// # Entries
//
// An entry is a CloudEvent (bus.Signal) plus its stream, its per-stream
// sequence (1, 2, 3 … — the stream's version after the entry), a global
// sequence across all streams and the commit time. Stream names are
// segments of [A-Za-z0-9][A-Za-z0-9_.-]* joined by '/': "agent/c1",
// "agent/p/t", "conversation/proj/conv", "project/x", "dlq".
//
// # Invariants
//
//  1. One sequencer. Appends queue up and one caller at a time leads:
//     it assigns the sequences of every queued append under one mutex
//     (Log.commitMu), in one Pebble batch handed to Pebble's commit
//     pipeline inside that mutex, so WAL order equals sequence order. The
//     appends that queue during its fsync form the next group, which is
//     sequenced while that fsync runs and shares the next one (group
//     commit; see commit.go).
//  2. Gapless. Per-stream sequences are 1, 2, 3 … with no gap and no
//     duplicate, and global sequences only grow. A failed WAL sync poisons
//     the Log (every later call fails with ErrFailed), so a sequence that
//     was handed out but not made durable is never followed by one that was.
//  3. Durable before visible. Append returns only after the fsync that
//     covers its batch (unless Options.NoSync). Readers and subscribers see
//     an entry only after that fsync: every read is bounded by the durable
//     watermark, the highest global sequence known to be synced. Pebble
//     itself makes a batch visible before its WAL sync; the watermark hides
//     that window.
//  4. Atomic. One call to Append or AppendMulti is one Pebble batch: all of
//     its entries, across all of its streams, are written or none is.
//  5. Retained prefix. Truncation and deletion remove a prefix of a stream
//     (or all of it); what is gone reads as gone (ErrGone), never as
//     corrupt.
//
// # Idempotency
//
// Every entry has an idempotency record ('I' below) naming its position.
// The sequencer checks each new event against the events of its group so
// far, then against the database. A Bloom filter in memory (idemfilter.go)
// holds the key of every idempotency record in the database, so for
// nearly every new event it answers "absent" without a Pebble lookup; a
// "maybe" (a duplicate, a removed entry, or a false alarm) is looked up.
// The filter is built from a snapshot in the background at the first
// append after the Log opens (a Log only read never scans the keys) and
// again when it fills up, taking meanwhile every key committed
// after the snapshot; until it is built every new event is looked up. It
// can only err towards "maybe", so it never lets a duplicate through; its
// size is bounded by Options.IdempotencyFilterBytes.
//
// # Key layout
//
// Every key starts with one byte naming its kind. Sequences are 8-byte
// big-endian, so byte order is numeric order and both a stream and the
// global log are plain range scans. Stream names never contain 0x00, so the
// 0x00 after the name ends it and no stream's range overlaps another's.
//
//	'L' "format"                         → layout version (1 byte)
//	'L' "gseq"                           → last global sequence handed out (8)
//	'S' stream 0x00 seq(8)               → entry value
//	'G' gseq(8)                          → the same entry value (global order)
//	'I' stream 0x00 uvarint(len(source)) source id → seq(8)   (idempotency)
//	'M' stream                           → stream metadata (head, first, count, bytes)
//	'P' stream                           → latest snapshot
//
// The entry value is stored twice, under its stream key and under its
// global key, so that replaying a stream and replaying the global log are
// both sequential scans with no point lookups; the price is twice the
// space for entries.
//
// # Entry value encoding (format 1)
//
//	format   1 byte  (1)
//	crc32c   4 bytes, Castagnoli, over everything after it
//	gseq     8 bytes big-endian
//	seq      8 bytes big-endian
//	commit   8 bytes big-endian, Unix nanoseconds
//	flags    1 byte  (bit 0: time present, bit 1: data is base64 in JSON)
//	stream, id, source, type, subject, datacontenttype, dataschema:
//	         each uvarint length + bytes (0 = absent for the optional ones)
//	time     8 bytes big-endian Unix nanoseconds, if flag bit 0
//	ext      uvarint count, then per extension uvarint length + name,
//	         uvarint length + value in its canonical string form
//	data     the rest
//
// The specversion is always "1.0" and not stored. The encoding is the
// on-disk format: new formats get a new format byte and old ones stay
// readable. Every read verifies the checksum; a mismatch or a value that
// does not decode is a *CorruptError naming stream and sequence.
//
// # Concurrency
//
// A *Log is safe for concurrent use by any number of goroutines. Iterators
// returned by its read methods are used by one goroutine at a time; a
// *Subscription likewise.
package eventlog

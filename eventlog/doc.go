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
// # Key layout (layout 2)
//
// Every key starts with one byte naming its kind. Sequences are 8-byte
// big-endian, so byte order is numeric order and both a stream and the
// global log are plain range scans. Stream names never contain 0x00, so the
// 0x00 after the name ends it and no stream's range overlaps another's.
//
//	'L' "format"                         → layout version (1 byte: 2)
//	'L' "gseq"                           → last global sequence handed out (8)
//	'G' gseq(8)                          → entry value (its only copy)
//	'S' stream 0x00 seq(8)               → gseq(8)                  (stream index)
//	'I' stream 0x00 uvarint(len(source)) source id → seq(8) gseq(8) (idempotency)
//	'M' stream                           → stream metadata (head, first, count, bytes)
//	'P' stream                           → latest snapshot
//
// Each entry's value is stored once, under its global key; a stream is an
// index of 8-byte global sequences. Reading the global log (projections,
// subscribers, log export) is a sequential scan of values; reading a
// stream scans its index and steps a second iterator, over the same
// state, forward through the global keys it names — sequential where the
// stream's entries were written together (an agent's signal and its cmd
// record, a conversation's turn), a seek per entry where streams
// interleave. Every value read through the index is checked to hold the
// stream position that named it.
//
// Why this order holds the value, measured on 2 cores (1,000 streams
// interleaved, 1M entries of ~330 bytes, 4 MB memtables): with the value
// under the global key Pebble compacted 248 MB and the writes took 4.8 s;
// with it under the stream key, 616 MB and 9.7 s. Global keys only grow,
// so their values are written in key order; stream keys interleave, so
// values under them are rewritten by every compaction of overlapping
// tables. Reading through the index cost about 1.2 µs an entry for a
// stream (interleaved) and 1.4 µs for the global log the other way round,
// against 0.25 µs for a plain scan. The write path runs for every entry
// and global readers tail every entry live (the projections, the
// conversation publisher), while streams are read through the index
// mostly at recovery; so the value is under the global key.
//
// Layout 1 (every build before layout 2, up to commit 54c9658) stored the value under
// both keys. Open upgrades such a log in place (upgrade.go): it rewrites
// each stream key's value into the 8-byte index, in synced batches, after
// marking the layout key "upgrading"; an interrupted upgrade is finished
// by the next Open, and a build that reads only layout 1 refuses the log
// from the first batch on. MigrateLayout (jido-bus log migrate
// --to-layout 1) goes back for such a build (downgrade.go): it copies
// each value back under its stream key, marking the layout key
// "downgrading", which the old build refuses and the next Open of this
// one upgrades back. A log in a layout newer than this build's is
// refused unchanged.
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

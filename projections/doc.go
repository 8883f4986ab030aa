// Package projections folds the event log back into read models.
//
// A Projection is a pure fold: a name, a version, a selector (which streams
// and which event types it reads, and whether it keeps one state per stream),
// an initial state and Apply(state, entry) → state. It does no I/O. A Runner
// feeds projections from an *eventlog.Log and keeps their states and
// checkpoints in a Store; queries read a key's state as of the last
// checkpoint (Runner.Get) or fold it afresh up to any past position
// (Runner.At).
//
// # Where projection state lives
//
// A Store is its own Pebble database, by convention <data-dir>/projections
// beside the log's <data-dir>/log, rather than a keyspace inside the log's
// database. The log stays append-only, so its invariants (one sequencer,
// gapless sequences, a durable watermark) are untouched by projection
// writes, which are large, frequent and deleted wholesale on a rebuild.
// Projection state is derived data: deleting the directory only costs a
// rebuild. And a runner's checkpoint batch never waits behind the log's
// group commit or competes with it for the sequencer.
//
// # Guarantees
//
//  1. Exactly once. A checkpoint (each projection's position, the global
//     sequence it has folded up to, and every state changed since the last
//     checkpoint) is one synced Pebble batch. After a crash a runner resumes
//     from the last checkpoint and folds the entries after it again into the
//     states as they were at that checkpoint, so no entry is applied twice to
//     a persisted state and none is skipped.
//  2. In order. Entries are applied in global-sequence order, which within
//     a stream is stream-sequence order.
//  3. Versioned. A stored checkpoint whose version differs from the
//     projection's Version is discarded with all of the projection's states
//     when the Runner is created, and the projection is rebuilt from the start
//     of the log. Rebuild does the same on demand.
//  4. Bounded memory. A runner keeps at most Options.CacheStates decoded
//     states per projection (least recently used are evicted, written to the
//     pending batch first when changed), so a projection with 100,000 keys
//     needs no more memory than one with a thousand.
//
// # Reading ahead
//
// A pass reads the log on a goroutine of its own, a few thousand entries
// at most ahead of the fold, and there calls Prepare of the projections
// that are Preparers (decoding an event's data into a Memo, typically), so
// that reading and decoding use one core while folding and checkpointing
// use another. The pass stops that goroutine before it returns.
//
// # Key layout of a Store
//
//	'L' "format"           → layout version (1 byte)
//	'C' name               → checkpoint (JSON: version, position, keys, applied)
//	'K' name 0x00 key      → the state of key (the projection's JSON encoding)
//
// Names and keys never contain 0x00, so each projection's states are one
// contiguous range, which a rebuild deletes with one range deletion.
package projections

// Package jslog is the event log on a NATS JetStream cluster: the same
// contract as the Pebble log in package eventlog (expected versions,
// idempotence on an event's source and id, per-stream order, snapshots),
// replicated by JetStream instead of written to one disk.
//
// Layout. A fixed number P of partition streams (<PREFIX>_LOG_<n>, file
// storage, R replicas, no limit that drops a message) hold every log
// stream; a log stream lives on the subject <prefix>.log.<n>.<name>, where
// n is the partition of its root agent (Partition) and <name> is the
// stream name with '/' as the token separator. P is written into every
// partition stream's metadata when the streams are created; Open refuses a
// different P. Snapshots are the last message per subject of one more
// stream, <PREFIX>_SNAPSHOTS.
//
// One append is one message: its events as a JSON array of structured
// CloudEvents, the stream's version after it in the Jido-Version header and
// the number of events in Jido-Events, so an append of k events at version
// v takes versions v+1..v+k. Every publish carries
//   - Nats-Msg-Id, from the stream and the first new event's source and id,
//     so that a publish retried after a lost acknowledgement is answered as
//     a duplicate within the stream's duplicate window, and
//   - Nats-Expected-Last-Subject-Sequence, the stream sequence of the last
//     message this Log saw on the subject: the fence. A writer whose view is
//     stale (another node appended, or it lost ownership without knowing)
//     has its publish refused, reads what it missed and decides again; an
//     exact expected version then fails with eventlog.ErrWrongVersion.
//
// Idempotence beyond the duplicate window comes from the Log itself: it
// keeps, per stream it has touched, the source and id of every event the
// subject holds (read once, then kept current by its own appends and by
// what it reads after a refused fence), so a duplicate is found before
// anything is published, as in the Pebble log.
//
// Positions. Entry.Seq and Position.Seq are the stream's version, as in
// the Pebble log. GlobalSeq is the JetStream sequence of the event's
// message in its partition stream: ordered within a partition (and so
// within a stream), shared by the events of one append, and not comparable
// across partitions.
package jslog

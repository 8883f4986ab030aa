// Package dlq keeps the dead letters of a node in its log: every input
// refused (bad input, a role's forbidden publish, a full queue, a
// decision refused) is appended to the stream "dlq", many to an append,
// by a Writer that never drops one — one the log refuses even alone is
// stored as a stub that says what it was about. It also keeps the key
// of the digests that replace credentials in dead letters
// (natsbus.Options.DigestKey), the same across restarts.
//
// It imports eventlog and bus (natsbus for the dead letter's record),
// as eventlog/logapi does; the node wires it to the bus's OnDeadLetter.
package dlq

// Package cluster decides which node owns which partition of the log in
// cluster mode, with liveness and orderly hand-over, on one JetStream
// key-value bucket: no consensus of its own, only the bucket's
// compare-and-set (a write conditional on the key's last revision, which
// the stream's leader enforces).
//
// The bucket is <PREFIX>_CLUSTER (file storage, the log's replicas,
// history 1, no TTL). Its keys:
//
//   - config: {"partitions":P,"replicas":R}, created by the first node; a
//     node started with another P is refused (ErrConfigMismatch).
//   - nodes.<id>: the node's heartbeat, rewritten every LeaseTimeout/4.
//     A node is alive to an observer while the key's revision keeps
//     changing: an observer that has seen the same revision (or no key)
//     for longer than the lease timeout, on its own monotonic clock, judges
//     it dead. No two machines' clocks are compared. A node id whose
//     record is alive cannot be claimed by a second node
//     (ErrDuplicateNode); one whose record stood still for a lease timeout
//     is taken over (Join waits that long after a crash).
//   - partitions.<n>: {"owner","epoch","since"}. A node takes a vacant
//     partition, or one whose lease ran out, by a write conditional on the
//     revision it saw, with epoch+1; the owner renews it (the same
//     condition) every LeaseTimeout/4. A refused renewal, or a watched
//     write by another node, means the lease is lost. A release writes
//     owner "" with the same epoch, after OnRelease returned.
//
// Why every partition's record is renewed, not only the node's heartbeat
// (which would be one write per node instead of one per partition): an
// observer whose watch is behind (a reconnect, a server restart) sees
// every heartbeat stand still and would take partitions from live owners
// if a partition's record did not change by itself; since it does, the
// observer's write, conditional on the stale revision, is refused. At 64
// partitions and the default 6 s lease that is about 43 small writes a
// second for the whole cluster.
//
// Assignment: the owner partition p should have is the rendezvous (HRW)
// winner among the live nodes that are not leaving — the same answer on
// every node that sees the same set, and a node joining or leaving moves
// only about P/n partitions. Each member, on every watched change and
// every tick, takes vacant or expired partitions it should own (and,
// so that diverging views cannot leave one without an owner, any
// partition that has been vacant or expired for a further lease timeout),
// and hands over partitions another live node should own: OnRelease (the
// node stops deciding and finishes the commits in flight), then the
// release, then the other node takes it and calls its OnAcquire.
//
// Self-fencing: an owner whose last successful renewal of a partition
// began more than LeaseTimeout*3/4 ago (its own monotonic clock; after a
// pause, or cut off from the servers) gives the partition up locally at
// once — Owns turns false on the clock, OnRelease is called — a quarter of
// a lease timeout before any other node may take it, since the others
// wait a full lease timeout of an unchanged revision that the owner's
// renewal, begun earlier, wrote. The margin covers the owner's loop being
// late (each request is bounded by LeaseTimeout/8) and the difference of
// two clocks' rates, not a pause longer than it: a process stopped for
// longer than a quarter lease timeout at the wrong instant may still act
// once after another took over. Leases are liveness; the safety is the
// log's fence (jslog's expected last subject sequence on every commit),
// which refuses a commit from an owner that lost its partition without
// knowing it.
//
// A leader election of the bucket's stream takes a few seconds at most;
// renewals refused meanwhile are retried every quarter lease, and a lease
// is given up only after three quarters of a lease timeout without one
// succeeding, so an election under the default 6 s lease moves nothing.
// With leases shorter than an election, partitions move back and forth.
package cluster

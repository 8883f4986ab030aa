// Package bench measures a jido-bus node against the physical limits it
// runs on: the NATS transport and the disk. It is the engine of
// `jido-bus bench` (modelled on `nats bench`): one process, one run, each
// scenario on a node started in process on a real data directory, with
// durable (fsync) commits, and each figure printed beside a baseline
// measured the same way on the same machine in the same run.
//
// # Scenarios and what their figures mean
//
// cast — throughput of fire-and-forget signals. Publishers (goroutines, each
// with its own NATS connection to the node's TCP URL) publish
// counter.increment signals, round-robin over counter agents, on
// jido.agent.<id>.counter.increment. The figure "durable cast" is signals
// per second from the first publish until the last signal is committed
// (fsynced) to the agent's stream; commits are counted as the runtime's
// appends return (a thin wrapper around the log), and at the end the
// agents' versions must add up to the number sent. Publishers keep at most
// Config.Window signals published and not yet committed, so nothing
// overflows a queue and nothing is dropped. Baselines:
//   - "raw NATS pub/sub": the same messages (same headers, same data) from
//     the same publishers to one subscriber that only counts them — the
//     transport limit;
//   - "raw Pebble synced batches": the same bytes (each message's header
//     block and data) written to a Pebble database in the same data
//     directory, in batches as large as the runtime's commit groups were in
//     the durable run (signals per fsync, observed from the log's durable
//     watermark), each committed with pebble.Sync by two writers so that
//     one batch is written while the previous one syncs, as the log's group
//     commit does — the disk limit.
//
// call — latency of request/reply, as `nats req` does it: one client sends
// a call to a counter and waits for the reply, which the node sends after
// the commit. p50/p90/p99/p99.9 come from an HDR histogram (microsecond
// resolution). Baselines: the same client against a trivial responder on
// the same server (raw NATS request/reply), and as many commits of a
// call's two entries to a raw Pebble database with pebble.Sync, one after
// the other (the disk's share of a durable call).
//
// fanout — one broadcast on jido.signal.counter.increment reaching K counter
// agents; the time from the publish until all K decisions are committed,
// over a few rounds, as signals delivered and committed per second.
// Baseline: the durable cast rate of this run, when cast ran.
//
// replay — rebuilding agents from the log. The log is filled first (not
// measured) with the agents' snapshots turned off, so recovery folds every
// entry, then opened and closed once untimed (which leaves it at rest).
// "recovery" times what node.Start does to bring agents back
// (eventlog.Open, runtime.New, Runtime.Recover, twice as many agents at
// once as there are CPUs) and counts the entries of the agents' streams;
// "node start" times a whole node.Start on the same directory. Baseline:
// reading the same streams with ReadStream without folding them, in one
// loop (the read limit). Both are also given as process CPU per entry,
// which the machine's other work disturbs less.
//
// jetstream — the same messages published to a JetStream file-storage
// stream, what a user would otherwise pick as the event store: async
// publish with a window and sync publish, on the node's embedded server
// (which, like any NATS server with default settings, flushes its files
// to disk every two minutes rather than on each write), and async publish
// on a second in-process server with sync_always, which fsyncs each write
// as the jido-bus log does. Baseline: the durable cast rate of this run.
//
// cluster — jido-bus on a NATS cluster, in this process: three servers
// routed on 127.0.0.1 (JetStream with sync_always, stores under the
// scenario's directory) and two nodes in cluster mode (16 partitions, R3,
// the lease of Config.ClusterLease), started on their own NATS
// connections. "cluster durable cast" is the cast scenario's run through
// them: publishers connect to the servers, a node that does not own a
// counter's partition forwards the cast to the one that does, and a cast
// counts when its owner committed it to the replicated log. "cluster call"
// is the call scenario's latency through them. Baselines, in the same run
// on the same servers: "raw R3 async publish" copies a decision on one
// counter signal as the log stored it (its headers and body) into 16
// streams made with the settings the log's partition streams have, each
// message to the stream of its counter's partition, with the publishers
// and window of the casts; "raw R3 sync publish" sends the same messages
// one at a time, each waiting for its acknowledgement, as many as the
// calls. Then, Config.Kills times, a node stops abruptly (its NATS
// connection closes: it writes nothing more, as after kill -9) while a
// client calls a counter in each of its partitions, retrying what is
// refused; "failover" is, per kill, the slowest of those partitions' time
// from its last acknowledgement before the stop to the first after. A new
// node joins and takes its share before the next kill. CPU per cast and
// per raw publish is the whole process's: servers, nodes and publishers.
//
// # Targets
//
// Report.Targets checks the goals jido-bus sets itself: durable cast at least 50% of
// the raw Pebble rate and at least 100,000 signals/s, call p99 at most 2 ms
// and, by one caller and by Config.Callers at once, at most the raw NATS
// request p99 (by as many callers) + the raw Pebble sync p99 + 0.1 ms,
// recovery at least 500,000 entries/s; on a cluster, casts at least 0.35×
// the raw R3 async publish rate, call p99 at most 2× the raw R3 sync
// publish p99 + 1 ms, and the slowest failover at most the lease + 5 s. A
// miss is reported as a miss.
//
// Timings depend on the machine and on what else runs on it; the tests of
// this package check structure and sanity, never speed.
//
// It is internal: the binary's bench command is its only user, and its
// Config and Report are not an API anyone outside this module may rely on.
package bench

// Package runtime runs agents: one single-writer actor per agent whose
// pure logic (package agents) decides each signal, whose decision is
// committed to the event log before anything acts on it, and which any
// process can rebuild from that log.
//
// # Usage
//
// New returns a Runtime over a Store (an *eventlog.Log) and a registry of
// agent types; Recover brings back the agents a previous process left
// running; Start, Deliver/Call/Cast/Broadcast, State, List and Stop are
// the API; Shutdown halts this process's work without stopping the agents.
//
// # The inbox, the queue and the drain loop
//
// Each agent (server) has an inbox of signals and a queue of committed
// directives, each drained by a goroutine that runs only while it has
// work. A signal goes through these steps:
//
//  1. Deliver appends it to the inbox (or refuses it: unknown agent, full
//     queue, runtime closing) and starts the inbox loop if none runs.
//  2. The inbox loop takes the signals waiting, decides each one with the
//     agent's pure logic (agents.Step): a new agent and its directives.
//     No I/O happens here, so a replay decides the same again.
//  3. It commits each signal with its cmd record (new version, the
//     directives' log forms, outcomes of earlier directives) — several
//     signals share one append and one fsync — and only then publishes
//     the new state to readers.
//  4. It appends the committed directives to the queue, starts the queue
//     loop if none runs, and then answers callers: a caller that hears of
//     a commit finds its directives queued (a Stop after it records them
//     as dropped), the first perhaps already running.
//     testdata/commit_order traces steps 3 to 6: append, sync, exec and
//     reply, never an exec or a reply before its sync.
//  5. The queue loop executes directives one at a time, in commit order,
//     through their DirectiveExec; it notes each outcome, which rides in
//     the agent's next cmd record or, once the agent has been quiet for
//     Config.EffectsLinger, in an effects record the runtime's recorder
//     writes for many agents in one append.
//  6. Recovery (and a crashed agent's restart) reads the stream back: the
//     latest snapshot, then every later signal refolded through the same
//     logic; directives without a recorded outcome run again (at least
//     once; emitted ids are derived, so consumers can deduplicate).
//
// # The Store contract
//
// The runtime relies on its Store for three things. An append returns
// only once it is durable (synced). An append that states an expected
// version is refused, writing nothing, when the stream is not at that
// version: that is what makes each agent's stream single-writer even
// across processes. A multi-stream append is atomic: every part is
// written or none is (a start with its index record, a stop with its
// deregistration, the recorder's effects records). Events whose source
// and id a stream already holds are not written again, so every record
// the runtime writes has an id unique in its stream and stable across a
// retried commit; an agent started again under its id is a new
// incarnation whose ids carry where it began (incarnation.go).
//
// # Goroutines and locks
//
// Every goroutine has an owner that stops it. The Runtime owns its
// workers (rt.workers: the emit flusher, the effects recorder, the
// passivation janitor, agent loops, timer deliveries and tasks) and the
// wake-up timers of passive agents; Shutdown cancels rt.ctx and waits for
// them. A server owns its two loops and its armed timers (timers.go),
// stopped by stop, halt and passivation.
//
// The inbox loop is the only writer of the agent, its version and its
// timers' durable state (recovery writes them before any loop starts);
// readers see the last commit through an atomic pointer (server.view).
// Locks are taken in this order, never the reverse, and only appendMu is
// held across a Store call:
//
//	rt.mu → s.appendMu → s.mu → s.timers.mu
//
// rt.mu guards the runtime's tables (active, passive and failed agents,
// the hierarchy); s.appendMu serialises appends to the agent's stream and
// guards its head; s.mu guards the inbox, the queue and the status.
package runtime

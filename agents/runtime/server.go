package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Statuses of an agent in the runtime (Info.Status).
const (
	StatusRunning    = "running"
	StatusRestarting = "restarting" // crashed; being restored from its log
	StatusStopped    = "stopped"
	StatusFailed     = "failed"  // crashed past the restart budget; stays down
	StatusPassive    = "passive" // idle: only an index entry; its next signal activates it
)

// envelope is a signal waiting in an agent's inbox.
type envelope struct {
	sig   bus.Signal
	reply func(Reply, error) // nil for a cast
	// lifecycle signals (child started/exit, orphaned) are decided only
	// when a route of the agent matches them; otherwise they are dropped
	// without a trace in the agent's stream.
	lifecycle bool
	// internal: the agent's own work comes back (an executor's async
	// result, a lifecycle signal). It is admitted past max_queue_size and
	// max_queue_bytes — their number is bounded by the directives in
	// flight, which the bounds already hold — because refusing it would
	// lose it: nobody is there to retry, and the turn it answers would
	// wait for ever.
	internal bool
	// bytes is what it counts against max_queue_bytes (signalBytes).
	bytes int
	// joined is how many envelopes after this one were delivered with it
	// (CallAll): the inbox loop decides them in the same batch, so they
	// commit in one append.
	joined int
	// noState: the caller does not want the state in its Reply, so it is
	// not encoded (CallAll).
	noState bool
}

// queued is a committed directive waiting to be executed.
type queued struct {
	d       agents.Directive
	version uint64     // the cmd record's version; 0 for start-time child specs
	index   int        // position in the cmd record's list; -1 for child specs
	input   bus.Signal // the signal that produced it
	at      time.Time  // commit time of its cmd record
	seq     uint64     // stream sequence of its cmd record
	gseq    uint64     // global sequence of its cmd record
	// recovered is true when it is executed again after a restart.
	recovered bool
	// bytes is what its input signal counts against max_queue_bytes,
	// released when it is taken: the last directive of a decision carries
	// them, the others 0.
	bytes int
}

// server is one agent's actor. Two loops serve it, each running on its
// own goroutine only while it has work:
//
//   - the inbox loop decides signals one at a time (agents.Step) and
//     commits each signal with its cmd record in one batch before anything
//     else happens — several queued signals, decided in a row, share one
//     batch (batch.go) — it is the only writer of the agent's state;
//   - the queue loop executes committed directives in commit order.
//
// So signals keep being decided while a slow directive runs, directives of
// one agent never run concurrently or out of order, and readers (State)
// see the last committed version through an atomic pointer, never waiting
// for either loop.
type server struct {
	rt      *Runtime
	id      string
	def     *agents.Definition
	stream  string
	opts    Options
	restart string
	budget  restartBudget
	// born is the stream sequence of this incarnation's started record
	// (incarnation.go); set before the server is registered, then fixed.
	born uint64

	// appendMu serialises appends to the stream, whose head it tracks so
	// every append states the version it expects.
	appendMu sync.Mutex
	head     uint64

	// Owned by the inbox loop (and by recovery before the loops start).
	agent         agents.Agent
	version       uint64
	sinceSnapshot int
	lastSignal    string

	mu           sync.Mutex
	status       string
	reason       string
	inbox        []envelope
	inboxRunning bool
	queue        []queued
	// queuedBytes is what the signals in the inbox, and those whose
	// directives are queued, count against max_queue_bytes (signalBytes).
	queuedBytes  int
	queueRunning bool
	errorCount   int
	restarts     int
	lastActive   time.Time // when the agent last got a signal
	snapSeq      uint64    // the stream position of its last snapshot
	timers       *timers
	// handingOver is set when the agent's partition is being released
	// (Release): its signals still commit, its directives no longer run —
	// they stay pending in the log, for the partition's next owner.
	handingOver bool
	tasks       map[string]context.CancelFunc
	// effects are outcomes of executed directives not yet in the log; a
	// decision carries the confirmed ones (see takeEffects), and the
	// runtime's effects recorder records what is left once the agent has
	// been quiet for Config.EffectsLinger (effects.go).
	//
	// idleMemory: inbox, queue, effects, pending, pendingSeq and tasks are
	// nil while empty — made when something arrives, dropped when the
	// last of it is gone — because an idle agent kept their buffers: 590
	// of the 2,581 bytes an active idle counter cost (a heap profile of
	// BenchmarkMemoryPerAgent, 2026-11-28), for one allocation per busy
	// spell, which a durable cast (~45 µs) does not notice.
	effects []effectResult
	// executing is set while the queue loop holds a directive taken from
	// the queue whose outcome is not noted yet (waitExecuted).
	executing  bool
	lastCommit time.Duration     // when the inbox loop last committed, as monotonicNow
	pending    map[uint64]int    // cmd version → directives whose outcome is not in the log yet
	pendingSeq map[uint64]uint64 // cmd version → stream sequence of its record
	changed    chan struct{}     // closed at the next notify; made when someone waits
	loops      sync.WaitGroup
	dispatcher dispatch.Dispatcher

	view atomic.Pointer[view]

	// origin is the agent's started record without its initial state:
	// every snapshot carries it, so that a stream truncated past its
	// started entry still says what the agent is. Set before the agent
	// first commits, never changed.
	origin startedRecord
}

// view is what readers see: the last committed agent and version.
type view struct {
	agent      agents.Agent
	version    uint64
	lastSignal string
}

func newServer(rt *Runtime, id string, def *agents.Definition, stream string, opts Options, restart string) *server {
	s := &server{
		rt:         rt,
		id:         id,
		def:        def,
		stream:     stream,
		opts:       opts,
		restart:    restart,
		status:     StatusRunning,
		lastActive: rt.cfg.Now(), // started, restored or activated: idle from now on
		budget:     restartBudget{max: rt.cfg.MaxRestarts, window: rt.cfg.RestartWindow},
	}
	s.timers = newTimers(s)
	return s
}

// publish makes the current agent visible to readers and wakes waiters.
func (s *server) publish() {
	s.view.Store(&view{agent: s.agent, version: s.version, lastSignal: s.lastSignal})
	s.notify()
}

func (s *server) notify() {
	s.mu.Lock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	s.mu.Unlock()
}

func (s *server) changedChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// deliver queues a signal for decision (deliverAll).
func (s *server) deliver(env envelope) error { return s.deliverAll([]envelope{env}) }

// deliverAll queues signals for decision, together (nothing can come
// between them in the inbox), refusing them all when the agent is not
// running or its queue is full — before anything is committed.
func (s *server) deliverAll(envs []envelope) error {
	s.mu.Lock()
	switch s.status {
	case StatusRunning, StatusRestarting:
	case StatusPassive:
		s.mu.Unlock()
		return errPassivated
	case StatusFailed:
		s.mu.Unlock()
		return bus.Errorf(ReasonAgentFailed, "agent %s is down: %s", s.id, s.reason)
	case ReasonClosed: // halted: the runtime is shutting down
		s.mu.Unlock()
		return errShuttingDown
	default:
		s.mu.Unlock()
		return bus.Errorf(bus.ReasonNotFound, "agent %s is %s", s.id, s.status)
	}
	internal := envs[0].internal // deliver's one, or CallAll's, never internal
	if n := len(s.inbox) + len(s.queue); n+len(envs)-1 >= s.opts.maxQueueSize() && !internal {
		s.mu.Unlock()
		return bus.Errorf(bus.ReasonQueueOverflow, "agent %s has %d signals and directives queued, its max_queue_size; retry later", s.id, n)
	}
	size := 0
	for i := range envs {
		envs[i].bytes = signalBytes(&envs[i].sig)
		size += envs[i].bytes
	}
	if s.queuedBytes+size > s.opts.maxQueueBytes() && !internal {
		held := s.queuedBytes
		s.mu.Unlock()
		return bus.Errorf(bus.ReasonQueueOverflow, "agent %s holds %d bytes of queued signals; %d more would pass its max_queue_bytes, %d; retry later", s.id, held, size, s.opts.maxQueueBytes())
	}
	s.queuedBytes += size
	s.inbox = append(s.inbox, envs...)
	s.lastActive = s.rt.cfg.Now()
	start := !s.inboxRunning && s.status == StatusRunning
	if start {
		s.inboxRunning = true
		s.loops.Add(1)
		s.rt.deciding.Add(1)
	}
	s.mu.Unlock()
	if start && !s.rt.workers.Go(s.runInbox) {
		// The runtime has shut down since the status was read: no loop
		// will decide what the inbox holds, so it is refused now (envs
		// too, through their replies), as Shutdown refuses what is left.
		s.mu.Lock()
		s.inboxRunning = false
		s.mu.Unlock()
		s.loops.Done()
		s.rt.deciding.Done()
		s.halt(errShuttingDown)
	}
	return nil
}

func (s *server) runInbox() {
	defer s.loops.Done()
	defer s.rt.deciding.Done()
	for {
		s.mu.Lock()
		if len(s.inbox) == 0 || s.status != StatusRunning {
			s.inboxRunning = false
			if len(s.inbox) == 0 {
				s.inbox = nil // see idleMemory
			}
			s.mu.Unlock()
			s.notify() // a shutdown waits for the inbox loop to end
			return
		}
		if n := batchable(s.inbox); n > 1 {
			batch := make([]envelope, n)
			copy(batch, s.inbox)
			clear(s.inbox[:n])
			s.inbox = s.inbox[n:]
			for _, env := range batch {
				s.queuedBytes -= env.bytes
			}
			s.mu.Unlock()
			answered := 0
			if !s.guard(func() string { return "deciding signals" }, func() { s.decideAndCommitBatch(batch, &answered) }) {
				for _, env := range batch[answered:] {
					s.refuse(env, bus.Errorf(bus.ReasonInternal, "agent %s crashed while deciding signal %s; it is being restored from its log", s.id, env.sig.ID()))
				}
				return
			}
			continue
		}
		env := s.inbox[0]
		s.inbox[0] = envelope{}
		s.inbox = s.inbox[1:]
		s.queuedBytes -= env.bytes
		s.mu.Unlock()
		if !s.guard(func() string { return "deciding a signal" }, func() { s.decideAndCommit(env) }) {
			s.refuse(env, bus.Errorf(bus.ReasonInternal, "agent %s crashed while deciding signal %s; it is being restored from its log", s.id, env.sig.ID()))
			return
		}
	}
}

// decide runs the agent's pure logic on sig (decideSignal).
func (s *server) decide(sig bus.Signal) (agents.Agent, []agents.Directive) {
	return s.decideOn(s.agent, sig)
}

// decideOn is decide on agent rather than the committed one.
func (s *server) decideOn(agent agents.Agent, sig bus.Signal) (agents.Agent, []agents.Directive) {
	return decideSignal(agent, sig)
}

func (s *server) decideAndCommit(env envelope) {
	next, directives := s.decide(env.sig)
	if env.lifecycle && onlyNoRoute(directives) {
		return // the agent does not listen for this lifecycle signal
	}
	if e, refused := agents.Refusal(directives); refused {
		s.refuse(env, e.Err) // not committed: its id stays free
		return
	}
	now := s.rt.now()
	carried := s.takeEffects()
	rec, err := cmdRecordOf(s.rt.codec, &env.sig, s.version+1, now, directives, carried)
	if err != nil {
		s.putBackEffects(carried)
		s.refuse(env, fmt.Errorf("agent %s: encode directives of signal %s: %w", s.id, env.sig.ID(), err))
		return
	}
	res, err := s.append(s.rt.ctx, env.sig, rec)
	if obs := s.rt.cfg.Observer; obs != nil && err == nil {
		obs.Committed(s.def.Name(), s.rt.now().Sub(now))
	}
	if err != nil {
		s.putBackEffects(carried)
		if errors.Is(err, eventlog.ErrOutcomeUnknown) || s.rt.cfg.Partitions != nil && errors.Is(err, eventlog.ErrWrongVersion) {
			s.rt.fenced(s, env, err)
			return
		}
		s.rt.log.Error("commit signal", "agent", s.id, "signal", env.sig.ID(), "type", env.sig.Type(), "err", err)
		s.refuse(env, err)
		return
	}
	if res.Positions[0].Duplicate {
		s.putBackEffects(carried)
		r, err := s.reply()
		r.Duplicate, r.Committed = true, true
		s.answer(env, r, err)
		return
	}
	s.effectsRecorded(carried)
	s.committed(env, next, directives, now, res.Positions[1])
}

// committed moves the agent on to next once the decision on env's signal
// is in the log (its cmd record at pos), queues the directives and
// answers a call.
func (s *server) committed(env envelope, next agents.Agent, directives []agents.Directive, now time.Time, pos eventlog.Position) {
	seq := pos.Seq
	s.agent, s.version, s.lastSignal = next, s.version+1, env.sig.ID()
	s.mu.Lock()
	s.lastCommit = monotonicNow()
	s.mu.Unlock()
	s.timers.committed(&env.sig, directives, now)
	s.publish()

	// A decision has a directive or two: they are built on the stack
	// (enqueueDirectives copies them into the queue), not in a slice of
	// their own on every signal.
	var buf [4]queued
	qs := buf[:0]
	for i, d := range directives {
		qs = append(qs, queued{d: d, version: s.version, index: i, input: env.sig, at: now, seq: seq, gseq: pos.GlobalSeq})
	}
	if len(qs) > 0 {
		qs[len(qs)-1].bytes = env.bytes // the input is held until they ran
	}
	// Queued (and so counted as pending) before a snapshot at this very
	// decision: otherwise the snapshot would pass over its directives, and
	// a crash before they ran would lose them.
	s.enqueueDirectives(qs)
	s.maybeSnapshot(seq)

	if env.reply == nil {
		return // a cast: nobody waits for the state
	}
	var r Reply
	var err error
	if !env.noState {
		r, err = s.reply()
	}
	r.Committed = true
	if err == nil {
		err = firstError(directives)
	}
	s.answer(env, r, err)
}

func (s *server) answer(env envelope, r Reply, err error) {
	if env.reply != nil {
		env.reply(r, err)
	}
}

// reply encodes the committed state for a caller.
func (s *server) reply() (Reply, error) {
	v := s.view.Load()
	if v == nil {
		return Reply{}, nil
	}
	state, err := agents.EncodeState(v.agent.State)
	if err != nil {
		return Reply{}, fmt.Errorf("agent %s: encode state: %w", s.id, err)
	}
	return Reply{State: state, Version: v.version}, nil
}

// firstError turns the first Error directive of a decision into the error
// a caller sees; the directive itself still goes to the error policy.
func firstError(ds []agents.Directive) error {
	for _, d := range ds {
		if e, ok := d.(agents.Error); ok && e.Err != nil {
			return e.Err
		}
	}
	return nil
}

func onlyNoRoute(ds []agents.Directive) bool {
	if len(ds) != 1 {
		return false
	}
	e, ok := ds[0].(agents.Error)
	return ok && e.Context == agents.ContextRouting
}

// append commits events to the agent's stream at the version it expects.
func (s *server) append(ctx context.Context, events ...bus.Signal) (eventlog.AppendResult, error) {
	return s.appendPart(ctx, events, false)
}

// appendPart commits events to the agent's stream at the version it
// expects; with allNew an event already in the stream fails it
// (eventlog.StreamAppend.AllNew) instead of being skipped.
func (s *server) appendPart(ctx context.Context, events []bus.Signal, allNew bool) (eventlog.AppendResult, error) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	s.mu.Lock()
	st := s.status
	s.mu.Unlock()
	if st == ReasonClosed {
		return eventlog.AppendResult{}, errShuttingDown
	}
	if st != StatusRunning && st != StatusRestarting {
		return eventlog.AppendResult{}, bus.Errorf(ReasonStopped, "agent %s is %s", s.id, st)
	}
	if !allNew {
		res, err := s.rt.cfg.Store.Append(ctx, s.stream, eventlog.ExactVersion(s.head), events...)
		if err == nil {
			s.head = res.Version
		}
		return res, err
	}
	res, err := s.rt.cfg.Store.AppendMulti(ctx, []eventlog.StreamAppend{{Stream: s.stream, Expected: eventlog.ExactVersion(s.head), Events: events, AllNew: true}})
	if err != nil {
		return eventlog.AppendResult{}, err
	}
	s.head = res[0].Version
	return res[0], nil
}

// enqueueDirectives queues committed directives for execution.
func (s *server) enqueueDirectives(qs []queued) {
	if len(qs) == 0 {
		return
	}
	s.mu.Lock()
	if s.status != StatusRunning {
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, qs...)
	if s.pending == nil {
		s.pending = make(map[uint64]int)
		s.pendingSeq = make(map[uint64]uint64)
	}
	for _, q := range qs {
		s.queuedBytes += q.bytes
		s.pending[q.version]++
		if q.seq > 1 {
			// The signal's entry, just before its cmd record: recovery
			// reads from there, so a pending directive has its input.
			s.pendingSeq[q.version] = q.seq - 1
		}
	}
	start := !s.queueRunning
	if start {
		s.queueRunning = true
		s.loops.Add(1)
	}
	s.mu.Unlock()
	if start && !s.rt.workers.Go(s.runQueue) {
		// The runtime has shut down: the directives stay pending in the
		// log, and the next start runs them.
		s.mu.Lock()
		s.queueRunning = false
		s.mu.Unlock()
		s.loops.Done()
	}
}

// epoch anchors monotonicNow.
var epoch = time.Now()

// monotonicNow is the time since the process started, from the monotonic
// clock, in 8 bytes.
func monotonicNow() time.Duration { return time.Since(epoch) }

func (s *server) runQueue() {
	defer s.loops.Done()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 || s.status != StatusRunning || s.handingOver {
			s.queueRunning = false
			if len(s.queue) == 0 {
				s.queue = nil // see idleMemory
			}
			owes := s.status == StatusRunning && len(s.effects) > 0
			s.mu.Unlock()
			if owes {
				s.rt.effects.owe(s)
			}
			return
		}
		q := s.queue[0]
		s.queue[0] = queued{}
		s.queue = s.queue[1:]
		s.queuedBytes -= q.bytes
		s.executing = true
		s.mu.Unlock()

		var res ExecResult
		var err error
		ok := s.guard(func() string {
			return fmt.Sprintf("executing %s directive %d of version %d", q.d.DirectiveKind(), q.index, q.version)
		}, func() {
			res, err = s.execute(q)
		})
		if !ok {
			s.mu.Lock()
			s.executed()
			s.mu.Unlock()
			return
		}
		s.noteEffect(q, res, err)
		if res.Kind == ExecStop {
			s.stopFromDirective(res.Reason)
			return
		}
	}
}

// noteEffect notes a directive's outcome, to be recorded in the log with
// a later decision or by recordEffects.
func (s *server) noteEffect(q queued, res ExecResult, err error) {
	out := effectResult{Version: q.version, Index: q.index, Kind: q.d.DirectiveKind(), Outcome: res.outcome()}
	if err != nil {
		out.Outcome = OutcomeFailed
		out.Error = err.Error()
		if errors.Is(err, errNoExecutor) {
			out.Outcome = OutcomeUnknown
		}
	}
	if obs := s.rt.cfg.Observer; obs != nil {
		obs.Executed(out.Kind, out.Outcome)
	}
	out.gen = s.rt.flusher.mark()
	s.mu.Lock()
	s.effects = append(s.effects, out)
	s.executed()
	s.mu.Unlock()
}

// executed notes that the queue loop holds no directive any more, and
// wakes a stop waiting for it (waitExecuted); s.mu is held.
func (s *server) executed() {
	s.executing = false
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// waitExecuted waits until the directive the queue loop was executing,
// if any, has its outcome noted, so that a stop records it: a stop taken
// between the directive's effect and its note recorded nothing, and the
// outcome of an emit already published was lost from the log
// (TestStopRecordsTheDirectiveInHand; TestReadEmitsAcrossIncarnations
// failed so, 1 in 30 runs). It waits at most flushTimeout: an executor
// that stops its own agent would otherwise wait for itself.
func (s *server) waitExecuted(ctx context.Context) {
	timer := time.NewTimer(flushTimeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if !s.executing {
			s.mu.Unlock()
			return
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// takeEffects removes the noted outcomes whose emits NATS confirmed, for
// a decision to carry.
func (s *server) takeEffects() []effectResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var taken []effectResult
	kept := s.effects[:0]
	for _, e := range s.effects {
		if s.rt.flusher.confirmed(e.gen) {
			taken = append(taken, e)
		} else {
			kept = append(kept, e)
		}
	}
	clear(s.effects[len(kept):])
	s.effects = kept
	if len(kept) == 0 {
		s.effects = nil // see idleMemory
	}
	return taken
}

// putBackEffects returns outcomes taken for a commit that failed.
func (s *server) putBackEffects(es []effectResult) {
	if len(es) == 0 {
		return
	}
	s.mu.Lock()
	s.effects = append(es, s.effects...)
	s.mu.Unlock()
}

// effectsRecorded notes that outcomes are in the log: their directives
// are no longer pending.
func (s *server) effectsRecorded(es []effectResult) {
	if len(es) == 0 {
		return
	}
	s.mu.Lock()
	for _, e := range es {
		if _, ok := s.pending[e.Version]; !ok {
			continue // nothing pending for it (the maps may be nil)
		}
		if s.pending[e.Version]--; s.pending[e.Version] <= 0 {
			delete(s.pending, e.Version)
			delete(s.pendingSeq, e.Version)
		}
	}
	if len(s.pending) == 0 {
		s.pending, s.pendingSeq = nil, nil // an idle agent keeps no map (see idleMemory)
	}
	s.mu.Unlock()
}

// maybeSnapshot saves the agent's state every SnapshotEvery signals.
func (s *server) maybeSnapshot(seq uint64) {
	every := s.opts.snapshotEvery()
	if every < 0 {
		return
	}
	s.sinceSnapshot++
	if s.sinceSnapshot < every {
		return
	}
	s.sinceSnapshot = 0
	data, err := s.snapshotData()
	if err == nil {
		err = s.rt.cfg.Store.SaveSnapshot(s.rt.ctx, s.stream, seq, data)
	}
	if err == nil {
		s.mu.Lock()
		s.snapSeq = seq
		s.mu.Unlock()
	}
	if err != nil {
		s.rt.log.Warn("save snapshot", "agent", s.id, "stream", s.stream, "err", err)
	}
}

// Info describes an agent; it is the reply to jido.api.agent.state.
type Info struct {
	ID          string            `json:"id"`
	Type        string            `json:"type"`
	Stream      string            `json:"stream"`
	Status      string            `json:"status"`
	Reason      string            `json:"reason,omitempty"`
	State       json.RawMessage   `json:"state"`
	Version     uint64            `json:"version"`
	QueueLength int               `json:"queue_length"`
	Parent      *ParentRef        `json:"parent,omitempty"`
	Children    map[string]string `json:"children,omitempty"`
	ErrorCount  int               `json:"error_count"`
	Restarts    int               `json:"restarts,omitempty"`
	LastSignal  string            `json:"last_signal,omitempty"`
}

func (i Info) stateStatus() string {
	var st struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(i.State, &st)
	return st.Status
}

func (s *server) info() Info {
	info := Info{ID: s.id, Type: s.def.Name(), Stream: s.stream}
	if v := s.view.Load(); v != nil {
		info.Version, info.LastSignal = v.version, v.lastSignal
		if st, err := agents.EncodeState(v.agent.State); err == nil {
			info.State = st
		}
	}
	info.Parent, info.Children = s.rt.family(s.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	info.Status, info.Reason = s.status, s.reason
	info.QueueLength = len(s.inbox) + len(s.queue)
	info.ErrorCount, info.Restarts = s.errorCount, s.restarts
	return info
}

// signalBytes is about what sig holds in memory, for max_queue_bytes:
// its data and its attributes.
func signalBytes(sig *bus.Signal) int {
	n := len(sig.Data()) + len(sig.ID()) + len(sig.Source()) + len(sig.Type()) + len(sig.Subject()) + len(sig.DataSchema()) + len(sig.DataContentType())
	for k, v := range sig.Extensions() {
		n += len(k)
		if str, ok := v.(string); ok {
			n += len(str)
		} else {
			n += 16 // a number, a time, a boolean
		}
	}
	return n
}

package runtime

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// snapshot is the data of an agent's snapshot in the log.
type snapshot struct {
	State      json.RawMessage `json:"state"`
	Version    uint64          `json:"version"`
	ErrorCount int             `json:"error_count,omitempty"`
	Timers     timerState      `json:"timers"`
	// PendingFrom is the stream sequence of the oldest cmd record whose
	// directives had not all run when the snapshot was taken; recovery
	// reads from there to find them. Zero means none were pending.
	PendingFrom uint64 `json:"pending_from,omitempty"`
	// Started is the agent's started record (its initial state left
	// out), for when truncation removed the stream's first entry.
	// Snapshots written before it existed have none.
	Started *startedRecord `json:"started,omitempty"`
}

// snapshotData encodes the agent as of the last commit; it runs on the
// inbox loop, which owns the agent.
func (s *server) snapshotData() ([]byte, error) {
	state, err := agents.EncodeState(s.agent.State)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	snap := snapshot{State: state, Version: s.version, ErrorCount: s.errorCount}
	if s.origin.ID != "" {
		snap.Started = &s.origin
	}
	for _, seq := range s.pendingSeq {
		if snap.PendingFrom == 0 || seq < snap.PendingFrom {
			snap.PendingFrom = seq
		}
	}
	s.mu.Unlock()
	snap.Timers = s.timers.snapshot()
	return json.Marshal(snap)
}

// Recover brings back every agent the index lists as started and not
// stopped, each from its latest snapshot plus a replay of the later
// signals through Cmd; directives that were committed but not recorded as
// executed run again, timers are re-armed for what is left of their delay,
// and tasks whose result never came run again. An agent that has settled
// (see settled: every agent that was passive when the process ended) comes
// back passive instead, and is restored by its next signal. It returns how
// many agents came back, active or passive. An agent that cannot be
// restored is logged and left out; the others still come back. In cluster
// mode (Config.Partitions) it brings back nothing: Acquire does, for one
// partition.
func (rt *Runtime) Recover(ctx context.Context) (int, error) {
	if rt.cfg.Partitions != nil {
		return 0, nil
	}
	return rt.recoverIndex(ctx, IndexStream, nil)
}

// recoverIndex is Recover for the agents index lists; serve, when not
// nil, is called under rt.mu as they are registered, so that the runtime
// takes signals for them from that moment on.
func (rt *Runtime) recoverIndex(ctx context.Context, index string, serve func()) (int, error) {
	var order []string // each id once, in its first start's order
	registered := map[string]indexRecord{}
	listed := map[string]bool{}
	for e, err := range rt.cfg.Store.ReadStream(index, eventlog.ReadOptions{}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("recover: read %s: %w", index, err)
		}
		var rec indexRecord
		if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
			return 0, fmt.Errorf("recover: %s entry %d: %w", index, e.Seq, err)
		}
		rec.Seq = max(rec.Seq, 1) // records from before incarnations
		switch e.Event.Type() {
		case TypeRegistered:
			if !listed[rec.ID] {
				listed[rec.ID] = true
				order = append(order, rec.ID)
			}
			registered[rec.ID] = rec
		case TypeDeregistered:
			if registered[rec.ID].Seq == rec.Seq {
				delete(registered, rec.ID)
			}
		}
	}
	type restored struct {
		s       *server
		pending []queued
		passive string        // the type of an agent that comes back passive
		version uint64        // and its version
		started startedRecord // its parent and options, for the hierarchy
	}
	var back, all []restored
	passive := map[string]restored{} // the agents that come back passive
	var errs []error
	// Agents are restored in parallel, twice as many at a time as there
	// are CPUs (more on a cluster, whose reads wait on the network): each
	// replays its own stream through its own pure logic, sharing
	// nothing. That many workers take the agents in turn; a goroutine
	// per agent grew a fresh stack to the depth of a fold every time.
	live := order[:0]
	for _, id := range order {
		if _, ok := registered[id]; ok {
			live = append(live, id)
		}
	}
	results := make([]restored, len(live))
	failures := make([]error, len(live))
	restoreOne := func(i int) {
		idx := registered[live[i]]
		rec, err := rt.readStarted(idx.Stream, idx.Seq)
		results[i].started = rec
		if err == nil {
			results[i].version, results[i].passive = rt.settledAt(rec)
		}
		if err == nil && results[i].passive == "" {
			results[i].s, results[i].pending, err = rt.restore(ctx, rec)
		}
		failures[i] = err // an agent that fails is listed failed; the others go on
	}
	var next atomic.Int64
	var restoring sync.WaitGroup
	for range min(rt.restoring(), len(live)) {
		restoring.Go(func() {
			for i := int(next.Add(1) - 1); i < len(live); i = int(next.Add(1) - 1) {
				restoreOne(i)
			}
		})
	}
	restoring.Wait()
	failed := map[string]failedAgent{}
	for i, id := range live {
		switch err := failures[i]; {
		case err != nil:
			// Never silently: the agent is listed as failed, with the
			// reason, until it is stopped.
			idx := registered[id]
			rt.log.Error("recover agent", "agent", id, "stream", idx.Stream, "err", err)
			errs = append(errs, fmt.Errorf("agent %s: %w", id, err))
			failed[id] = failedAgent{typ: idx.Type, stream: idx.Stream, born: idx.Seq, reason: err.Error()}
		case results[i].passive != "":
			passive[id] = results[i]
			all = append(all, results[i])
		default:
			back = append(back, results[i])
			all = append(all, results[i])
		}
	}
	rt.mu.Lock()
	if serve != nil {
		serve()
	}
	for _, r := range back {
		rt.register(r.s)
	}
	for id, f := range failed {
		rt.failed[id] = f
	}
	for id, r := range passive {
		rt.passive[id] = passiveAgent{typ: rt.typeIDOf(r.passive), born: registered[id].Seq, version: r.version}
		set := rt.byType[r.passive]
		if set == nil {
			set = make(map[string]struct{})
			rt.byType[r.passive] = set
		}
		set[id] = struct{}{}
	}
	rt.passPeak.grew(len(rt.passive))
	for _, r := range all {
		// A child whose parent is gone (stopped, or not restored) runs on
		// without one.
		if p := r.started.Parent; p != nil && rt.registered(p.ID) {
			rt.hier.link(r.started.ID, *p, r.started.Options.onParentDeath())
		}
	}
	rt.mu.Unlock()
	for _, r := range back {
		r.s.resume(r.pending, nil)
	}
	rt.log.Info("agents recovered", "active", len(back), "passive", len(passive), "failed", len(failed))
	return len(back) + len(passive), errors.Join(errs...)
}

// clusterRestoring is how many agents a cluster's node restores at once:
// each read of the replicated log is a round trip to a NATS server, so
// the CPUs alone would leave them idle.
const clusterRestoring = 32

// restoring is how many agents are restored at once: twice the CPUs.
// With one per CPU the workers kept 1.7 of the 2 cores busy
// (BenchmarkRecover's CPU time over its wall time) — a worker waits now
// and then, in a read's system call or on the collector — and twice as
// many restored 2-10% faster in six runs out of six, on the same CPU per
// entry.
func (rt *Runtime) restoring() int {
	if rt.cfg.Partitions != nil {
		return clusterRestoring
	}
	return 2 * goruntime.GOMAXPROCS(0)
}

// settled reports whether the agent of rec can come back passive — an
// index entry, activated by its next signal like any passive agent —
// instead of being restored now: its latest snapshot is the head of its stream with no directive
// pending and no timer or task awaited (which only an active agent
// serves). That holds for every agent that was passive when the process
// ended, so a restart costs what the active agents cost, not what the
// registered ones would.
func (rt *Runtime) settled(rec startedRecord) bool {
	_, typ := rt.settledAt(rec)
	return typ != ""
}

// settledAt is settled, returning the agent's type and its version (its
// snapshot's) when it can come back passive, and an empty type when not.
func (rt *Runtime) settledAt(rec startedRecord) (version uint64, typ string) {
	if rt.cfg.PassivateAfter < 0 {
		return 0, ""
	}
	if _, ok := rt.cfg.Types.Lookup(rec.Type); !ok {
		return 0, "" // restore says why
	}
	snap, err := rt.cfg.Store.LoadSnapshot(rec.Stream)
	if err != nil || snap.Version < rec.seq {
		return 0, "" // none, or an earlier incarnation's
	}
	var data struct {
		Version     uint64     `json:"version"`
		Timers      timerState `json:"timers"`
		PendingFrom uint64     `json:"pending_from"`
	}
	if json.Unmarshal(snap.Data, &data) != nil || data.PendingFrom != 0 || len(data.Timers.Awaiting) > 0 || len(data.Timers.Crons) > 0 {
		return 0, ""
	}
	for range rt.cfg.Store.ReadStream(rec.Stream, eventlog.ReadOptions{From: snap.Version + 1, Limit: 1}) {
		return 0, "" // an entry after the snapshot (or an error): restore
	}
	return data.Version, rec.Type
}

// readStarted reads the started record of the incarnation born (the
// stream sequence it sits at; 0 means 1) of an agent's stream, or, when
// truncation removed it, the copy its snapshot carries.
func (rt *Runtime) readStarted(stream string, born uint64) (startedRecord, error) {
	born = max(born, 1)
	for e, err := range rt.cfg.Store.ReadStream(stream, eventlog.ReadOptions{From: born, Limit: 1}) {
		if gone, ok := errors.AsType[*eventlog.GoneError](err); ok {
			// Truncated past the incarnation's start: its snapshot
			// carries the started record.
			return startedFromSnapshotAt(rt.cfg.Store, stream, gone.First, born)
		}
		if err != nil {
			return startedRecord{}, fmt.Errorf("read %s at %d: %w", stream, born, err)
		}
		if e.Seq != born && e.Event.Type() != TypeStarted {
			return startedFromSnapshotAt(rt.cfg.Store, stream, e.Seq, born)
		}
		if e.Seq != born || e.Event.Type() != TypeStarted {
			return startedRecord{}, fmt.Errorf("%s/%d: the entry is %s, not the agent's %s (was the stream truncated?)", stream, e.Seq, e.Event.Type(), TypeStarted)
		}
		var rec startedRecord
		if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
			return startedRecord{}, fmt.Errorf("%s/%d: started record: %w", stream, e.Seq, err)
		}
		rec.seq = e.Seq
		return rec, nil
	}
	// No entry: none ever, or every one truncated after a snapshot.
	if rec, err := startedFromSnapshotAt(rt.cfg.Store, stream, 0, born); err == nil {
		return rec, nil
	}
	return startedRecord{}, fmt.Errorf("%s/%d: no started record: %w", stream, born, eventlog.ErrNotFound)
}

// pendingCmd is a committed decision found during recovery.
type pendingCmd struct {
	version uint64
	seq     uint64
	gseq    uint64
	at      time.Time
	input   bus.Signal
	raw     json.RawMessage // the directives' log forms, decoded only when needed
	count   int             // how many directives; -1 when the record predates the count
	done    doneSet         // the directives whose outcome is recorded
	// finished is set when the last outcome arrived: the decision has
	// left the set, and only waits to be dropped from its list.
	finished bool
}

// doneSet is a set of directive indexes. Most decisions have a handful
// of directives, so the first 64 are bits; a map (one per decision, as
// before) cost two allocations per decision recovered.
type doneSet struct {
	low  uint64
	more map[int]bool // the others (and any negative index a record holds)
	n    int          // how many are in the set
}

func (d *doneSet) add(i int) {
	if i >= 0 && i < 64 {
		if d.low&(1<<i) == 0 {
			d.low |= 1 << i
			d.n++
		}
		return
	}
	if d.more == nil {
		d.more = map[int]bool{}
	}
	if !d.more[i] {
		d.more[i] = true
		d.n++
	}
}

func (d *doneSet) has(i int) bool {
	if i >= 0 && i < 64 {
		return d.low&(1<<i) != 0
	}
	return d.more[i]
}

// inFlight holds, by version, the decisions read so far whose directives
// do not all have a recorded outcome. A decision leaves it when the last
// one's arrives (most do one or two entries later), so recovering a long
// stream without snapshots holds the decisions still in flight, not all
// of them with their inputs. A stream's decisions come oldest first, so
// they are kept in a list by version rather than in a map of pointers
// (an allocation per decision): the ones that finish are dropped from its
// front as they do, and swept out whenever they are more than half of it.
// The lists are reused from one agent restored to the next (inFlights):
// growing one per agent was 14% of the bytes BenchmarkRecover allocated.
type inFlight struct {
	list []pendingCmd // list[head:] are the decisions, by version, oldest first
	head int
	open int // how many of them are not finished
}

// inFlights holds the sets of agents restored, emptied, for the next.
var inFlights = sync.Pool{New: func() any { return new(inFlight) }}

// release empties f and gives it back for another restore; what it held
// must not be used after.
func (f *inFlight) release() {
	clear(f.list)
	f.list, f.head, f.open = f.list[:0], 0, 0
	if cap(f.list) <= maxPooledInFlight {
		inFlights.Put(f)
	}
}

// maxPooledInFlight bounds the lists kept for reuse: one that grew for a
// stream with thousands of decisions in flight is left to the collector.
const maxPooledInFlight = 4096

// add puts pc in the set (one with the version of a decision there
// replaces it); a decision without directives is never in flight.
func (f *inFlight) add(pc pendingCmd) {
	if pc.count == 0 {
		return
	}
	n := len(f.list)
	if f.head == n || f.list[n-1].version < pc.version {
		if n == cap(f.list) && f.head > 0 {
			f.compact(false)
		}
		f.list = append(f.list, pc)
		f.open++
		return
	}
	i, found := f.find(pc.version)
	switch {
	case found && f.list[i].finished:
		f.list[i] = pc
		f.open++
	case found:
		f.list[i] = pc
	default:
		f.list = slices.Insert(f.list, i, pc)
		f.open++
	}
}

// find returns where the decision at version is or would be in the list.
func (f *inFlight) find(version uint64) (int, bool) {
	if f.head < len(f.list) && f.list[f.head].version == version {
		return f.head, true // the usual case: the oldest finishes first
	}
	i, found := slices.BinarySearchFunc(f.list[f.head:], version, func(pc pendingCmd, v uint64) int { return cmp.Compare(pc.version, v) })
	return f.head + i, found
}

// done records the outcome of directive index of the decision at version.
func (f *inFlight) done(version uint64, index int) {
	i, found := f.find(version)
	if !found || f.list[i].finished {
		return
	}
	pc := &f.list[i]
	pc.done.add(index)
	if pc.count >= 0 && pc.done.n >= pc.count {
		pc.finished = true
		f.open--
		f.sweep()
	}
}

// sweep drops the finished decisions from the front of the list, and
// all of them once they are more than half of it, so that the list holds
// about as many decisions as are in flight.
func (f *inFlight) sweep() {
	for f.head < len(f.list) && f.list[f.head].finished {
		f.list[f.head] = pendingCmd{} // its input and directives can go
		f.head++
	}
	if live := len(f.list) - f.head; live == 0 {
		f.list, f.head = f.list[:0], 0
	} else if live > 32 && 2*f.open < live {
		f.compact(true)
	}
}

// compact moves the decisions to the start of the list, leaving the
// finished ones out when dropFinished.
func (f *inFlight) compact(dropFinished bool) {
	kept := f.list[:0]
	for _, pc := range f.list[f.head:] {
		if !dropFinished || !pc.finished {
			kept = append(kept, pc)
		}
	}
	clear(f.list[len(kept):])
	f.list, f.head = kept, 0
}

// inOrder returns the decisions left, oldest first.
func (f *inFlight) inOrder() []*pendingCmd {
	out := make([]*pendingCmd, 0, f.open)
	for i := f.head; i < len(f.list); i++ {
		if !f.list[i].finished {
			out = append(out, &f.list[i])
		}
	}
	return out
}

// decidedKinds is what a glance at a decision's encoded directives tells
// recovery, without decoding them: whether they may hold a timer or a
// task (which recovery must decode and re-arm) and an Error directive
// (without which params need no validation on replay). The codec writes
// each directive's kind first, {"kind":"<kind>"; the glance looks for
// those bytes, so data of an emitted signal holding them only costs a
// decode or a validation, and a directive of those kinds is never missed.
type decidedKinds struct {
	timers, errors bool
}

func glance(raw []byte) decidedKinds {
	const lead = `{"kind":"`
	var k decidedKinds
	for {
		i := bytes.Index(raw, []byte(lead))
		if i < 0 {
			return k
		}
		raw = raw[i+len(lead):]
		switch {
		case bytes.HasPrefix(raw, []byte(`error"`)):
			k.errors = true
		case bytes.HasPrefix(raw, []byte(`schedule`)), bytes.HasPrefix(raw, []byte(`cron`)),
			bytes.HasPrefix(raw, []byte(`run_instruction"`)):
			k.timers = true
		}
	}
}

// restore rebuilds an agent from its stream: the latest snapshot, then the
// later signals replayed through the agent's pure logic. It returns the
// server (not yet registered or running) and the directives to run again.
func (rt *Runtime) restore(ctx context.Context, rec startedRecord) (*server, []queued, error) {
	return rt.restoreFrom(ctx, rec, true)
}

// restoreFrom is restore, from the latest snapshot when useSnapshot is
// true, else by replaying the whole stream. The fold (rebuild.go) rebuilds
// the agent; restoreFrom collects along the way what recovery needs
// beyond it: the decisions whose directives have no recorded outcome,
// the timers and the errors counted.
func (rt *Runtime) restoreFrom(ctx context.Context, rec startedRecord, useSnapshot bool) (*server, []queued, error) {
	def, ok := rt.cfg.Types.Lookup(rec.Type)
	if !ok {
		return nil, nil, fmt.Errorf("agent %s: type %q (started at %s/%d) is not registered in this runtime", rec.ID, rec.Type, rec.Stream, max(rec.seq, 1))
	}
	s := newServer(rt, rec.ID, def, rec.Stream, rec.Options, rec.Restart)
	s.born = max(rec.seq, 1)
	s.origin = rec
	s.origin.InitialState = nil
	// Without a snapshot the fold starts at the started record.
	f := &fold{types: rt.cfg.Types, stream: rec.Stream, born: s.born, refoldFrom: s.born, records: pooledFoldRecords()}
	defer f.records.release()
	readFrom := s.born
	snap, err := rt.cfg.Store.LoadSnapshot(rec.Stream)
	if err == nil && (!useSnapshot || snap.Version < s.born) {
		err = eventlog.ErrNotFound // none wanted, or an earlier incarnation's
	}
	switch {
	case err == nil:
		var data snapshot
		if err := json.Unmarshal(snap.Data, &data); err != nil {
			return nil, nil, fmt.Errorf("agent %s: snapshot at %d: %w", rec.ID, snap.Version, err)
		}
		agent, err := def.Restore(rec.ID, data.State)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: snapshot at %d: %w", rec.ID, snap.Version, err)
		}
		rec.seq = s.born
		f.def, f.started, f.agent, f.version, f.head = def, rec, agent, data.Version, snap.Version
		s.errorCount, s.snapSeq = data.ErrorCount, snap.Version
		if data.Timers.Awaiting != nil {
			s.timers.state.Awaiting = data.Timers.Awaiting
		}
		if data.Timers.Crons != nil {
			s.timers.state.Crons = data.Timers.Crons
		}
		f.refoldFrom = snap.Version + 1
		readFrom = f.refoldFrom
		if data.PendingFrom != 0 && data.PendingFrom < readFrom {
			readFrom = data.PendingFrom
		}
	case errors.Is(err, eventlog.ErrNotFound):
	default:
		return nil, nil, fmt.Errorf("agent %s: load snapshot: %w", rec.ID, err)
	}

	decisions := inFlights.Get().(*inFlight)
	defer decisions.release()
	f.decided = func(d foldedCmd) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, cr := &d.entry, d.rec
		if d.refolded {
			var directives []agents.Directive
			if d.kinds.timers {
				var err error
				if directives, err = rt.codec.DecodeAll(cr.Directives); err != nil {
					return fmt.Errorf("%s/%d: directives: %w", e.Stream, e.Seq, err)
				}
			}
			s.timers.mu.Lock()
			delete(s.timers.state.Awaiting, d.input.ID())
			s.timers.record(d.input, directives, e.Time)
			s.timers.mu.Unlock()
		}
		count := -1
		if cr.Count != nil {
			count = *cr.Count
		}
		pc := pendingCmd{version: cr.Version, seq: e.Seq, gseq: e.GlobalSeq, at: decidedAt(e), raw: cr.Directives, count: count}
		if d.input != nil {
			pc.input = *d.input
		}
		decisions.add(pc)
		return nil
	}
	f.effects = func(results []effectResult, refolded bool) { s.foldEffects(results, decisions, refolded) }
	if err := f.run(rt.cfg.Store.ReadStream(rec.Stream, eventlog.ReadOptions{From: readFrom})); err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", rec.ID, err)
	}
	s.agent, s.version, s.lastSignal, s.head = f.agent, f.version, f.lastSignal, f.head

	var pending []queued
	for _, pc := range decisions.inOrder() {
		directives, err := rt.codec.DecodeAll(pc.raw)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: directives at %s/%d: %w", rec.ID, rec.Stream, pc.seq, err)
		}
		for i, d := range directives {
			if pc.done.has(i) {
				continue
			}
			pending = append(pending, queued{d: d, version: pc.version, index: i, input: pc.input, at: pc.at, seq: pc.seq, gseq: pc.gseq, recovered: true})
		}
	}
	s.publish()
	return s, pending, nil
}

// decidedAt is the time of the decision whose cmd record is e: the time
// the runtime gave the record, which its directives ran with the first
// time (an emitted signal without time of its own takes it), so a re-run
// after a crash publishes the same time. The log's commit time, a moment
// later, stands in for records without one.
func decidedAt(e *eventlog.Entry) time.Time {
	if at := e.Event.Time(); !at.IsZero() {
		return at
	}
	return e.Time
}

// foldEffects marks recorded outcomes done, and counts the errors among
// them when their record is replayed (the snapshot counted older ones).
func (s *server) foldEffects(results []effectResult, decisions *inFlight, replay bool) {
	for _, r := range results {
		decisions.done(r.Version, r.Index)
		if replay && r.Kind == agents.KindError && r.Outcome != OutcomeDropped {
			s.errorCount++
		}
	}
}

// resume starts a restored agent: its timers are armed, its pending
// directives queued, and signals that waited for it handed to its inbox.
func (s *server) resume(pending []queued, inbox []envelope) {
	running := map[string]bool{}
	for _, q := range pending {
		if _, ok := q.d.(agents.RunInstruction); ok {
			running[taskResultID(&q.input, s.id, q.index)] = true
		}
	}
	st := s.timers.snapshot()
	for id := range st.Awaiting {
		if a := st.Awaiting[id]; a.Kind == "schedule" {
			s.timers.armSchedule(id)
		} else if a.Kind == "task" && !running[id] && a.Run != nil && a.Input != nil {
			// Not waited for: recovery holds no loop for a task that
			// waits for a slot (Config.MaxTasks).
			s.startTask(*a.Run, *a.Input, a.Index)
		}
	}
	for id := range st.Crons {
		if err := s.timers.armCron(id); err != nil {
			s.rt.log.Error("re-arm cron job", "agent", s.id, "job", id, "err", err)
		}
	}
	s.enqueueDirectives(pending)
	for _, env := range inbox {
		if err := s.deliver(env); err != nil {
			s.refuse(env, err) // a cast too: a dead letter, never a silent drop
		}
	}
}

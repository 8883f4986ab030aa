package runtime

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/goroutines"
)

// Store is what the runtime needs of the event log; *eventlog.Log is one.
type Store interface {
	Append(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error)
	AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error)
	ReadStream(stream string, opts eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error]
	SaveSnapshot(ctx context.Context, stream string, version uint64, data []byte) error
	LoadSnapshot(stream string) (eventlog.Snapshot, error)
}

var _ Store = (*eventlog.Log)(nil)

// Defaults of Config.
const (
	DefaultMaxRestarts    = 3
	DefaultRestartWindow  = 5 * time.Second
	DefaultPassivateAfter = 5 * time.Minute
)

// Config configures a Runtime. Store and Types are required; every other
// zero value is a sensible default.
type Config struct {
	// Store is the event log every agent's decisions are committed to.
	Store Store
	// Types holds the agent types Start accepts by name.
	Types *agents.Registry
	// Streams maps an agent type to the prefix of its agents' log streams
	// ("conversation" gives conversation/<id>); types not listed use
	// "agent".
	Streams map[string]string
	// Dispatch is where emitted signals go: its Conn publishes on NATS,
	// its Subjects name <prefix>.emit.<id>.<type>. A nil Conn keeps emits
	// in process (they are still logged and reach in-process subscribers
	// of Config.OnEmit).
	Dispatch dispatch.Env
	// Executors add or replace directive executors by kind (a third party's
	// own directive types). The built-in kinds are always there.
	Executors map[string]DirectiveExec
	// ErrorPolicies are the Go functions an agent may name as its error
	// policy ({"func":"name"}).
	ErrorPolicies map[string]ErrorPolicyFunc
	// Tasks run RunInstruction directives, by the instruction's action
	// name; a task does the work that may take time or touch the world.
	Tasks map[string]Task
	// MaxTasks bounds the tasks running at once over all agents. A task
	// past it waits, in order, for one to end; the agent whose task waits
	// runs no further directive meanwhile, so its queue fills and its new
	// signals are refused with queue_overflow (see taskSlots). Zero means
	// DefaultMaxTasks; a negative value is an error.
	MaxTasks int
	// Directives decodes directive log forms; nil means
	// agents.NewDirectiveCodec() with the built-ins.
	Directives *agents.DirectiveCodec
	// MaxRestarts within RestartWindow bound how often a crashing agent is
	// restarted from its log before it stays down (status "failed").
	// Zero means DefaultMaxRestarts and DefaultRestartWindow.
	MaxRestarts   int
	RestartWindow time.Duration
	// PassivateAfter is how long an agent stays idle before it gives up its
	// goroutines and memory, keeping only an index entry; its next signal
	// (or timer) brings it back from its snapshot. Zero means
	// DefaultPassivateAfter; a negative value keeps every agent active.
	PassivateAfter time.Duration
	// EffectsLinger is how long an agent must have committed nothing
	// before the outcomes of its directives get an effects record of their
	// own; until then its next decision carries them, which costs no
	// append. Outcomes not yet recorded when the process dies only mean
	// their directives run again on recovery. Zero means
	// DefaultEffectsLinger.
	EffectsLinger time.Duration
	// OnEmit, when set, is called with every signal an agent emits or a
	// lifecycle signal the runtime publishes, after it was dispatched. It
	// must not block.
	OnEmit func(from string, s *bus.Signal)
	// OnRefused, when set, is told of every signal an agent accepted into
	// its inbox and then refused without committing it: its decision
	// refused it (agents.Refuse), the log refused its commit (too large, a
	// full disk), or the agent stopped, failed or shut down before
	// deciding it. A call is also answered with err; a cast has only
	// this. The node files each as a dead letter. Lifecycle signals the
	// runtime makes itself are not reported. It is called on the agent's
	// loops and must not block for long.
	OnRefused func(agentID string, sig *bus.Signal, err error)
	// Observer is told of commits and directive executions, for metrics;
	// nil tells no one. It is called on the agents' loops and must not
	// block.
	Observer Observer
	// Logger receives the runtime's log; nil discards it.
	Logger *slog.Logger
	// Now is the clock for commit-time bookkeeping and timers; nil means
	// time.Now.
	Now func() time.Time
	// Partitions, when set, is cluster mode: the runtime serves only the
	// partitions it is given (Acquire, Release; see partition.go), and
	// Recover brings back nothing. Nil is a single node, which serves
	// every agent.
	Partitions *Partitions
}

// Runtime runs agents: one single-writer actor per agent, whose every
// decision is committed to the Store before it is acted on. A Runtime is
// safe for concurrent use.
type Runtime struct {
	cfg     Config
	log     *slog.Logger
	codec   *agents.DirectiveCodec
	emitter dispatch.Dispatcher
	flusher *emitFlusher
	execs   map[string]DirectiveExec
	ctx     context.Context
	cancel  context.CancelFunc
	// tasks bounds the tasks running at once (Config.MaxTasks).
	tasks *taskSlots
	// workers owns every goroutine of the runtime: agent loops, tasks,
	// restarts, the flusher, the recorder and the janitor. Shutdown's
	// Wait refuses new ones and waits for them.
	workers goroutines.Group
	// deciding counts the inbox loops (also in workers): Shutdown lets
	// the decision each has in flight commit before it cancels ctx, which
	// would fail an append that may already be in the log.
	deciding sync.WaitGroup
	typeByRt *bus.Router[string]

	mu         sync.RWMutex
	agents     map[string]*server             // active agents
	passive    map[string]passiveAgent        // passive agents: an index entry each
	wakes      map[string]*time.Timer         // the passive agents' wake-ups, for those with a timer due
	typeNames  []string                       // by typeID (index_memory.go)
	typeIDs    map[string]typeID              // by name
	agentsPeak mapPeak                        // of agents, for shrunk
	passPeak   mapPeak                        // of passive
	failed     map[string]failedAgent         // agents that failed at recovery (failed.go)
	activating map[string]chan struct{}       // activations in progress
	byType     map[string]map[string]struct{} // type → ids of its agents, active or passive
	hier       hierarchy                      // who spawned whom, active or passive
	held       map[int]bool                   // the partitions served (Config.Partitions)
	closing    bool
	// shuttingDown is closing, for Deliver's hot path to read without
	// the lock.
	shuttingDown atomic.Bool

	effects effectsRecorder // agents whose directive outcomes are not in the log yet
}

// New returns a Runtime. Call Recover to bring back the agents a previous
// run left registered.
func New(cfg Config) (*Runtime, error) {
	if cfg.Store == nil || cfg.Types == nil {
		return nil, errors.New("runtime: Config.Store and Config.Types are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Directives == nil {
		cfg.Directives = agents.NewDirectiveCodec()
	}
	if cfg.MaxTasks < 0 {
		return nil, fmt.Errorf("runtime: Config.MaxTasks %d is negative; leave it 0 for %d", cfg.MaxTasks, DefaultMaxTasks)
	}
	if cfg.MaxTasks == 0 {
		cfg.MaxTasks = DefaultMaxTasks
	}
	if cfg.MaxRestarts == 0 {
		cfg.MaxRestarts = DefaultMaxRestarts
	}
	if cfg.RestartWindow == 0 {
		cfg.RestartWindow = DefaultRestartWindow
	}
	if cfg.PassivateAfter == 0 {
		cfg.PassivateAfter = DefaultPassivateAfter
	}
	if cfg.EffectsLinger <= 0 {
		cfg.EffectsLinger = DefaultEffectsLinger
	}
	if cfg.Dispatch.Logger == nil {
		cfg.Dispatch.Logger = cfg.Logger
	}
	rt := &Runtime{
		cfg:        cfg,
		log:        cfg.Logger,
		codec:      cfg.Directives,
		agents:     make(map[string]*server),
		passive:    make(map[string]passiveAgent),
		wakes:      make(map[string]*time.Timer),
		typeIDs:    make(map[string]typeID),
		failed:     make(map[string]failedAgent),
		activating: make(map[string]chan struct{}),
		hier:       newHierarchy(),
		held:       make(map[int]bool),
		byType:     make(map[string]map[string]struct{}),
		typeByRt:   bus.NewRouter[string](),
		tasks:      newTaskSlots(cfg.MaxTasks),
	}
	rt.ctx, rt.cancel = context.WithCancel(context.Background())
	rt.flusher = newEmitFlusher(cfg.Dispatch.Conn)
	rt.execs = builtinExecutors()
	for kind, x := range cfg.Executors {
		rt.execs[kind] = x
	}
	if cfg.Dispatch.Conn != nil {
		d, err := dispatch.New(dispatch.Config{}, cfg.Dispatch)
		if err != nil {
			return nil, fmt.Errorf("runtime: default dispatch: %w", err)
		}
		rt.emitter = d
	} else {
		rt.emitter = dispatch.DispatcherFunc(func(context.Context, string, *bus.Signal) error { return nil })
	}
	for _, name := range cfg.Types.Names() {
		def, _ := cfg.Types.Lookup(name)
		for _, r := range def.Routes() {
			if _, err := rt.typeByRt.Add(r.Pattern, r.Priority, name); err != nil {
				return nil, fmt.Errorf("runtime: route %q of type %s: %w", r.Pattern, name, err)
			}
		}
	}
	// Goroutines start last, so a failed New leaves none behind.
	rt.workers.Go(func() { rt.flusher.run(rt.ctx) })
	// The effects recorder looks four times per EffectsLinger.
	rt.workers.Go(func() { rt.every(max(cfg.EffectsLinger/4, time.Millisecond), func() { rt.recordOwedEffects(false) }) })
	if cfg.PassivateAfter > 0 {
		// The janitor passivates idle agents, a few times per PassivateAfter.
		rt.workers.Go(func() {
			rt.every(min(max(cfg.PassivateAfter/4, 10*time.Millisecond), 30*time.Second), rt.passivateIdle)
		})
	}
	return rt, nil
}

func (rt *Runtime) now() time.Time { return rt.cfg.Now().UTC() }

// every calls fn every d until the runtime closes; it runs as one of
// rt.workers.
func (rt *Runtime) every(d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-rt.ctx.Done():
			return
		case <-tick.C:
		}
		fn()
	}
}

func (rt *Runtime) streamFor(typ, id string) string {
	prefix := rt.cfg.Streams[typ]
	if prefix == "" {
		prefix = "agent"
	}
	return prefix + "/" + id
}

// Observer receives what the runtime does, for metrics.
type Observer interface {
	// Committed is called after each decision was committed, with how long
	// the append took (the durable write, fsync included).
	Committed(agentType string, d time.Duration)
	// Executed is called after each directive ran, with its kind and its
	// outcome (OutcomeOK, OutcomeAsync, OutcomeStop, OutcomeFailed, …).
	Executed(kind, outcome string)
	// Refused is called for each signal refused before its commit, with
	// the reason (queue_overflow, not_found, …).
	Refused(reason string)
}

// Counts are how many agents a runtime holds and how much work waits.
type Counts struct {
	Active  int `json:"active"`
	Passive int `json:"passive"`
	// Queued is the signals and directives waiting, over all active agents.
	Queued int `json:"queued"`
	// Failed is the agents that failed at recovery and wait to be stopped.
	Failed int `json:"failed"`
	// Tasks is the tasks (RunInstruction) running, at most Config.MaxTasks.
	Tasks int `json:"tasks"`
	// TasksWaiting is the tasks waiting for a running one to end.
	TasksWaiting int `json:"tasks_waiting"`
}

// Counts returns the runtime's current counts.
func (rt *Runtime) Counts() Counts {
	rt.mu.RLock()
	c := Counts{Active: len(rt.agents), Passive: len(rt.passive), Failed: len(rt.failed)}
	active := make([]*server, 0, len(rt.agents))
	for _, s := range rt.agents {
		active = append(active, s)
	}
	rt.mu.RUnlock()
	for _, s := range active {
		s.mu.Lock()
		c.Queued += len(s.inbox) + len(s.queue)
		s.mu.Unlock()
	}
	c.Tasks, c.TasksWaiting = rt.tasks.counts(rt.cfg.MaxTasks)
	return c
}

// StartRequest is what Start needs; it is also the JSON body of
// jido.api.agent.start.
type StartRequest struct {
	Type string `json:"type"`
	// ID is the new agent's id; empty means a new ULID.
	ID           string         `json:"id,omitempty"`
	InitialState map[string]any `json:"initial_state,omitempty"`
	Options      Options        `json:"options,omitzero"`
	// Parent makes the agent a child of the running agent Parent.ID: it
	// is listed among that agent's children, told of as child.exit when
	// it stops, and handles its parent's stop by Options.OnParentDeath,
	// across restarts. Go callers only (json "-"): no request over the
	// API can adopt an agent into another's family. A parent that does
	// not run is refused not_found.
	Parent *ParentRef `json:"-"`

	restart string
}

// ErrNotFound is what a signal to an unknown agent fails with; test for
// it with errors.Is (a *bus.Error matches by type).
var ErrNotFound = &bus.Error{Type: bus.ReasonNotFound}

// Reasons the runtime adds to bus's.
const (
	ReasonAlreadyExists = "already_exists" // Start with an id that is taken
	ReasonUnknownType   = "unknown_type"   // Start with a type nobody registered
	ReasonStopped       = "stopped"        // the agent stopped while the signal waited
	ReasonAgentFailed   = "agent_failed"   // the agent crashed past its restart budget
	ReasonTimeout       = "timeout"        // Await ran out of time
	ReasonClosed        = "closed"         // the runtime is shutting down
)

// Start starts an agent of a registered type. Its first log entry (type,
// options, initial state) is committed before Start returns; the agent then
// runs until it is stopped, surviving restarts of the process.
func (rt *Runtime) Start(ctx context.Context, req StartRequest) (Info, error) {
	def, ok := rt.cfg.Types.Lookup(req.Type)
	if !ok {
		return Info{}, bus.Errorf(ReasonUnknownType, "no agent type %q is registered; known types: %v", req.Type, rt.cfg.Types.Names())
	}
	if req.ID == "" {
		req.ID = rt.newAgentID(req.Type)
	}
	if err := bus.ValidateAgentID(req.ID); err != nil {
		return Info{}, err
	}
	if err := req.Options.Validate(rt.cfg.ErrorPolicies); err != nil {
		return Info{}, err
	}
	if err := req.Options.admitDispatch(rt.cfg.Dispatch); err != nil {
		return Info{}, err
	}
	initial, err := json.Marshal(req.InitialState)
	if err != nil {
		return Info{}, bus.Errorf(bus.ReasonInvalidRequest, "initial_state: %v", err)
	}
	rec := startedRecord{ID: req.ID, Type: req.Type, Stream: rt.streamFor(req.Type, req.ID), InitialState: initial, Options: req.Options, Parent: req.Parent, Restart: req.restart}
	// The agent starts from its started record, exactly as recovery and
	// replay will rebuild it.
	agent, err := initialAgent(def, rec)
	if err != nil {
		return Info{}, bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	if err := rt.refuseTaken(req.ID); err != nil {
		return Info{}, err
	}
	expected, born, err := rt.nextIncarnation(req.ID, rec.Stream)
	if err != nil {
		return Info{}, err
	}

	rt.mu.Lock()
	if rt.closing {
		rt.mu.Unlock()
		return Info{}, bus.Errorf(ReasonClosed, "the runtime is shutting down")
	}
	if err := rt.refuseTakenLocked(req.ID); err != nil {
		rt.mu.Unlock()
		return Info{}, err
	}
	if err := rt.serves(req.ID, rec.Stream); err != nil {
		rt.mu.Unlock()
		return Info{}, err
	}
	if req.Parent != nil && !rt.registered(req.Parent.ID) {
		rt.mu.Unlock()
		return Info{}, bus.Errorf(bus.ReasonNotFound, "agent %s: its parent %s does not run", req.ID, req.Parent.ID)
	}
	s := newServer(rt, req.ID, def, rec.Stream, req.Options, req.restart)
	s.agent, s.born = agent, born
	// The agent is visible from here on; whatever appends to its stream
	// (a stop, a signal's commit) waits until its start is committed.
	s.appendMu.Lock()
	rt.register(s)
	if req.Parent != nil {
		rt.hier.link(req.ID, *req.Parent, req.Options.onParentDeath())
	}
	rt.mu.Unlock()

	s.origin = rec
	s.origin.InitialState = nil
	err = s.commitStart(ctx, rec, expected)
	s.appendMu.Unlock()
	if err != nil {
		rt.mu.Lock()
		rt.unregister(s)
		if req.Parent != nil {
			rt.hier.unlinkChild(req.ID)
		}
		rt.mu.Unlock()
		return Info{}, err
	}
	rt.log.Info("agent started", "id", req.ID, "type", req.Type, "stream", s.stream)
	rt.publishLifecycle(s.id, TypeStarted, incarnationID("started", s.id, s.born), map[string]any{"id": s.id, "type": req.Type, "parent": req.Parent})
	for _, child := range def.ChildSpecs() {
		s.enqueueDirectives([]queued{{d: child, index: -1}})
	}
	return s.info(), nil
}

// register adds s to the lookup tables; rt.mu must be held.
func (rt *Runtime) register(s *server) {
	rt.agents[s.id] = s
	rt.agentsPeak.grew(len(rt.agents))
	set := rt.byType[s.def.Name()]
	if set == nil {
		set = make(map[string]struct{})
		rt.byType[s.def.Name()] = set
	}
	set[s.id] = struct{}{}
}

// registered reports whether agent id is known, active or passive; rt.mu
// must be held.
func (rt *Runtime) registered(id string) bool {
	_, active := rt.agents[id]
	_, passive := rt.passive[id]
	return active || passive
}

// holds reports whether s is still the registered server of its id.
func (rt *Runtime) holds(s *server) bool {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.agents[s.id] == s
}

// unregister removes s from the lookup tables; rt.mu must be held.
func (rt *Runtime) unregister(s *server) {
	if rt.agents[s.id] == s {
		delete(rt.agents, s.id)
		rt.agents = shrunk(rt.agents, &rt.agentsPeak)
		delete(rt.byType[s.def.Name()], s.id)
	}
}

// lookup returns the active server of agent id, activating a passive
// agent first.
func (rt *Runtime) lookup(id string) (*server, error) {
	for {
		rt.mu.RLock()
		s := rt.agents[id]
		_, passive := rt.passive[id]
		rt.mu.RUnlock()
		if s != nil {
			return s, nil
		}
		if !passive {
			rt.mu.RLock()
			err := rt.servesAgent(id)
			rt.mu.RUnlock()
			if err != nil {
				return nil, err
			}
			return nil, bus.Errorf(bus.ReasonNotFound, "no agent %q is running", id)
		}
		if err := rt.activate(id); err != nil {
			return nil, err
		}
	}
}

// Reply is the answer to a call: the agent's state and version after the
// signal was committed.
type Reply struct {
	State   json.RawMessage `json:"state"`
	Version uint64          `json:"version"`
	// Duplicate is true when the signal (same source and id) had been
	// accepted before; nothing was decided again.
	Duplicate bool `json:"duplicate,omitempty"`
	// Committed is true when the signal is in the log, also when the
	// reply's error says its decision failed (the failure is recorded
	// there too); false when the signal was refused before the commit.
	Committed bool `json:"-"`
}

// Deliver hands sig to agent id and returns at once. reply, when not nil,
// is called exactly once: after the signal's commit with the new state, or
// with the reason it was refused. A refusal before queueing (unknown agent,
// full queue) is also returned, and then reply is not called.
func (rt *Runtime) Deliver(id string, sig bus.Signal, reply func(Reply, error)) error {
	return rt.deliver(id, envelope{sig: sig, reply: reply})
}

// deliver hands env to agent id, waiting out a passivation in progress.
func (rt *Runtime) deliver(id string, env envelope) error {
	return rt.deliverAll(id, []envelope{env})
}

// deliverAll hands envs to agent id together (CallAll), or refuses them
// all; deliver is it for one.
func (rt *Runtime) deliverAll(id string, envs []envelope) error {
	for {
		s, err := rt.lookup(id)
		if err == nil && rt.shuttingDown.Load() {
			err = errShuttingDown
		}
		if err == nil {
			err = s.deliverAll(envs)
			if errors.Is(err, errPassivated) {
				// It is going passive right now (its snapshot is being
				// saved); let that finish, then look again.
				goruntime.Gosched()
				continue
			}
		}
		if err != nil && rt.cfg.Observer != nil {
			rt.cfg.Observer.Refused(bus.ErrorType(err))
		}
		return err
	}
}

// Call delivers sig to agent id and waits for the commit.
func (rt *Runtime) Call(ctx context.Context, id string, sig bus.Signal) (Reply, error) {
	type answer struct {
		r   Reply
		err error
	}
	ch := make(chan answer, 1)
	if err := rt.Deliver(id, sig, func(r Reply, err error) { ch <- answer{r, err} }); err != nil {
		return Reply{}, err
	}
	select {
	case a := <-ch:
		return a.r, a.err
	case <-ctx.Done():
		return Reply{}, fmt.Errorf("call %s: %w (the signal stays queued and will be decided)", id, ctx.Err())
	}
}

// Cast delivers sig to agent id without waiting.
func (rt *Runtime) Cast(id string, sig bus.Signal) error { return rt.Deliver(id, sig, nil) }

// Broadcast delivers sig to every running agent that has a route matching
// its type and returns how many accepted it. Agents whose queue is full
// refuse it; their refusals are returned joined.
func (rt *Runtime) Broadcast(sig bus.Signal) (int, error) {
	var targets []string
	rt.mu.RLock()
	seen := map[string]bool{}
	for _, r := range rt.typeByRt.Match(sig.Type()) {
		if seen[r.Target] {
			continue
		}
		seen[r.Target] = true
		for id := range rt.byType[r.Target] {
			targets = append(targets, id)
		}
	}
	rt.mu.RUnlock()
	slices.Sort(targets)
	n := 0
	var errs []error
	for _, id := range targets {
		if err := rt.Deliver(id, sig, nil); err != nil {
			errs = append(errs, fmt.Errorf("agent %s: %w", id, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Stop stops agent id: pending directives are dropped, its timers
// cancelled, its children handled by their on_parent_death option, and a
// stopped record closes its stream. A directive already running finishes
// first (Stop waits for it at most 10 s) so that its outcome is recorded. A stopped agent stays stopped across
// restarts.
func (rt *Runtime) Stop(ctx context.Context, id, reason string) error {
	if reason == "" {
		reason = "stopped"
	}
	s, err := rt.lookup(id)
	if bus.ErrorType(err) == bus.ReasonNotFound {
		return rt.stopFailed(ctx, id, reason)
	}
	if err != nil {
		return err
	}
	return s.stop(ctx, reason)
}

// State describes agent id.
func (rt *Runtime) State(id string) (Info, error) {
	rt.mu.RLock()
	s := rt.agents[id]
	p, passive := rt.passive[id]
	var typ string
	if passive {
		typ = rt.typeName(p.typ)
	}
	f, failed := rt.failed[id]
	rt.mu.RUnlock()
	switch {
	case s != nil:
		return s.info(), nil
	case passive:
		return rt.passiveInfo(id, typ)
	case failed:
		return f.info(id), nil
	}
	return Info{}, bus.Errorf(bus.ReasonNotFound, "no agent %q is running", id)
}

// List describes every agent in the runtime, ordered by id. Passive
// agents are listed with status "passive" and without their state (State
// reads it from their snapshot).
func (rt *Runtime) List() []Info { return rt.ListSome(ListOptions{}) }

// ListOptions narrow and order ListSome. The zero value is List: every
// agent, by id.
type ListOptions struct {
	// Type keeps only the agents of this type; empty keeps every type.
	Type string
	// ByQueue orders by the signals and directives waiting (QueueLength),
	// most first, then by id; passive agents, with nothing waiting, come
	// after every active one. False orders by id.
	ByQueue bool
	// Limit keeps the first Limit agents of that order; 0 keeps them all.
	Limit int
	// SkipPassive leaves the passive agents out.
	SkipPassive bool
	// After keeps only the agents whose id sorts after it, for paging in
	// id order (the last id of one page is the next page's After). It is
	// ignored with ByQueue, an order that changes between two pages.
	After string
}

// ListSome describes the agents opts selects, in its order. With a Limit
// it looks at every agent's id and queue length but describes (and copies
// the state of) only the agents it returns. Looking at a million passive
// agents takes a good part of a second, so "the ten busiest" asks with
// SkipPassive, or with ByQueue, which looks at the passive agents only
// when fewer than Limit active ones match.
func (rt *Runtime) ListSome(opts ListOptions) []Info {
	sel := firstN{n: max(opts.Limit, 0), cmp: opts.compare}
	rt.mu.RLock()
	if sel.n == 0 {
		sel.items = make([]listEntry, 0, len(rt.agents)+len(rt.passive))
	}
	after := func(id string) bool { return opts.ByQueue || opts.After == "" || id > opts.After }
	active := make([]*server, 0, len(rt.agents))
	for _, s := range rt.agents {
		if (opts.Type == "" || s.def.Name() == opts.Type) && after(s.id) {
			active = append(active, s)
		}
	}
	if !opts.SkipPassive && (!opts.ByQueue || sel.n == 0 || len(active) < sel.n) {
		for id, p := range rt.passive {
			if typ := rt.typeName(p.typ); (opts.Type == "" || typ == opts.Type) && after(id) {
				sel.add(listEntry{id: id, queue: -1, typ: typ, version: p.version})
			}
		}
	}
	for id, f := range rt.failed {
		if opts.Type == "" || f.typ == opts.Type {
			sel.add(listEntry{id: id, queue: -1, typ: f.typ, failed: &f})
		}
	}
	rt.mu.RUnlock()
	for _, s := range active {
		s.mu.Lock()
		queue := len(s.inbox) + len(s.queue)
		s.mu.Unlock()
		sel.add(listEntry{id: s.id, queue: queue, s: s})
	}
	out := make([]Info, 0, len(sel.items))
	for _, e := range sel.sorted() {
		if e.s != nil {
			out = append(out, e.s.info())
		} else if e.failed != nil {
			out = append(out, e.failed.info(e.id))
		} else {
			out = append(out, Info{ID: e.id, Type: e.typ, Stream: rt.streamFor(e.typ, e.id), Status: StatusPassive, Version: e.version})
		}
	}
	return out
}

// listEntry is an agent ListSome considers: an active one (s) or a
// passive one (queue -1, so it sorts after every active agent by queue).
type listEntry struct {
	id    string
	queue int
	s     *server
	typ   string
	// version is a passive agent's.
	version uint64
	// failed is set for an agent that failed at recovery.
	failed *failedAgent
}

func (o ListOptions) compare(a, b listEntry) int {
	if o.ByQueue && a.queue != b.queue {
		return b.queue - a.queue
	}
	return strings.Compare(a.id, b.id)
}

// firstN keeps the n first entries added, by cmp (all of them when n is
// 0): a heap with the last one kept on top, so an entry that does not
// make it costs one comparison.
type firstN struct {
	n     int
	cmp   func(a, b listEntry) int
	items []listEntry
}

func (f *firstN) add(e listEntry) {
	switch {
	case f.n == 0:
		f.items = append(f.items, e)
	case len(f.items) < f.n:
		heap.Push(f, e)
	case f.cmp(e, f.items[0]) < 0:
		f.items[0] = e
		heap.Fix(f, 0)
	}
}

func (f *firstN) sorted() []listEntry {
	slices.SortFunc(f.items, f.cmp)
	return f.items
}

// heap.Interface, the greatest entry on top.
func (f *firstN) Len() int           { return len(f.items) }
func (f *firstN) Less(i, j int) bool { return f.cmp(f.items[i], f.items[j]) > 0 }
func (f *firstN) Swap(i, j int)      { f.items[i], f.items[j] = f.items[j], f.items[i] }
func (f *firstN) Push(x any)         { f.items = append(f.items, x.(listEntry)) }
func (f *firstN) Pop() any {
	last := f.items[len(f.items)-1]
	f.items = f.items[:len(f.items)-1]
	return last
}

// Await waits until agent id's state has "status" "completed" or "failed"
// (completion is state, not process exit) or the agent stops, and returns
// its description. When ctx ends first the error is a *bus.Error of type
// timeout that says what the agent was doing.
func (rt *Runtime) Await(ctx context.Context, id string) (Info, error) {
	s, err := rt.lookup(id)
	if err != nil {
		return Info{}, err
	}
	for {
		changed := s.changedChan()
		info := s.info()
		// A stopping agent is stopped once it is unregistered (its stop
		// record written, its id free): until then its id is still taken.
		stopping := info.Status == StatusStopped && rt.holds(s)
		if st := info.stateStatus(); !stopping && (st == "completed" || st == "failed" || info.Status != StatusRunning) {
			return info, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return info, bus.Errorf(ReasonTimeout, "agent %s has not completed: status %q, state.status %q, version %d, %d queued; last signal %s",
				id, info.Status, info.stateStatus(), info.Version, info.QueueLength, info.LastSignal)
		}
	}
}

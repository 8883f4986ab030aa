package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Options configure a Runner. The zero value gives the defaults.
type Options struct {
	// CacheStates bounds the decoded states a Runner keeps in memory per
	// projection. Zero means 1024.
	CacheStates int
	// CheckpointEvery is how many entries a Runner folds between two
	// checkpoints while it catches up; once it has caught up with the log
	// it checkpoints after every run of entries it finds, so a query lags
	// the log by at most one run. Zero means 100,000: each checkpoint is
	// an fsync and re-encodes every state changed since the last one, and
	// a rebuild folds that many entries in a fraction of a second, which
	// is all a crash can cost. A larger value rebuilds faster and redoes
	// more work after a crash.
	CheckpointEvery int
	// Logger receives errors the Runner retries. Nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) cacheStates() int     { return cmpOr(o.CacheStates, 1024) }
func (o Options) checkpointEvery() int { return cmpOr(o.CheckpointEvery, 100_000) }

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// ErrRunning: CatchUp was called while Run is running (or another CatchUp).
var ErrRunning = errors.New("projection runner is already running")

// errRestart ends a pass so that the next one starts from the lowest
// position again, after a rebuild request.
var errRestart = errors.New("restart pass")

// Runner feeds projections from a Log, in one pass over the log for all of
// them, and checkpoints them in a Store. Run follows the log until its
// context ends; CatchUp folds what is in the log now and returns (for
// commands that open a data directory without a server).
//
// A Runner is safe for concurrent use: Run (or CatchUp) owns the folding,
// and Status, Get, At, Keys and Rebuild may be called from any goroutine
// meanwhile. It does not close the Log or the Store.
type Runner struct {
	log    *eventlog.Log
	store  *Store
	opts   Options
	logger *slog.Logger
	projs  []*proj
	byName map[string]*proj

	passMu sync.Mutex // held by Run and CatchUp for the whole of their folding

	mu       sync.Mutex // guards rebuilds, kick, running
	rebuilds []string
	kick     context.CancelFunc // cancels the current pass, so it restarts
	running  bool

	// owned by the pass
	batch   *pebble.Batch
	scratch []byte // reused for the encodings a checkpoint copies into the batch
	// batchSize is the size of the last checkpoint's batch, with which the
	// next one starts, so that it does not grow by copying (a rebuild's
	// checkpoints are alike; a live one is small).
	batchSize int
	damaged   atomic.Uint64
}

// proj is one projection inside a Runner. The fields after def are owned
// by the pass, except those read through atomics and committed (under
// Runner.mu).
type proj struct {
	def     Definition
	cache   *lru
	dirty   []*node           // nodes changed since the last checkpoint (some may be evicted)
	pending map[string][]byte // encodings of changed states evicted since the last checkpoint
	// absent, when not nil, holds every key with a stored state (and
	// some without): see absent.
	absent *absent
	pos    atomic.Uint64 // last global sequence folded
	// matchTypes is false when the subscription already filters entries
	// by the projection's type pattern.
	matchTypes bool
	// rebuilding is set from a reset until a pass has caught up.
	rebuilding atomic.Bool
	applied    uint64
	keys       uint64
	committed  Checkpoint // under Runner.mu
}

// NewRunner prepares defs over log and store. A projection whose stored
// version differs from its Version, or that has no checkpoint, starts
// from the beginning of the log (its old states are deleted now). Two
// definitions with the same name are an error.
func NewRunner(log *eventlog.Log, store *Store, opts Options, defs ...Definition) (*Runner, error) {
	r := &Runner{log: log, store: store, opts: opts, logger: opts.Logger, byName: make(map[string]*proj)}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	for _, d := range defs {
		if _, dup := r.byName[d.name]; dup {
			return nil, fmt.Errorf("projection %s is defined twice", d.name)
		}
		p := &proj{def: d, cache: newLRU(opts.cacheStates()), pending: make(map[string][]byte)}
		cp, ok, err := store.Checkpoint(d.name)
		if err != nil {
			return nil, err
		}
		// A checkpoint past the log's last entry means the log lost entries
		// the projection had folded (a data dir restored from a backup, a
		// damaged WAL opened with --accept-wal-loss): the global sequences
		// it would skip are reused by new entries, so it starts over.
		past := ok && cp.Position > log.Durable()
		if !ok || cp.Version != d.version || past {
			switch {
			case past:
				r.logger.Warn("projection is past the end of the log, which lost entries; rebuilding", "projection", d.name, "position", cp.Position, "log_head", log.Durable())
			case ok:
				r.logger.Info("projection version changed; rebuilding", "projection", d.name, "stored", cp.Version, "version", d.version)
			}
			if cp, err = r.reset(d); err != nil {
				return nil, err
			}
		}
		p.committed = cp
		if cp.Position == 0 {
			// No checkpoint has committed a state since the reset.
			p.absent = newAbsent()
		}
		p.rebuilding.Store(cp.Position == 0)
		p.pos.Store(cp.Position)
		p.applied, p.keys = cp.Applied, cp.Keys
		r.projs = append(r.projs, p)
		r.byName[d.name] = p
	}
	common := r.commonTypes()
	for _, p := range r.projs {
		p.matchTypes = p.def.sel.Types != common
	}
	return r, nil
}

// reset deletes every state of d and stores an empty checkpoint, in one
// synced batch.
func (r *Runner) reset(d Definition) (Checkpoint, error) {
	cp := Checkpoint{Version: d.version}
	b := r.store.db.NewBatch()
	defer b.Close()
	lo, hi := stateBounds(d.name)
	if err := b.DeleteRange(lo, hi, nil); err != nil {
		return cp, err
	}
	enc, _ := json.Marshal(cp)
	if err := b.Set(checkpointKey(d.name), enc, nil); err != nil {
		return cp, err
	}
	if err := r.store.commit(b); err != nil {
		return cp, fmt.Errorf("reset projection %s: %w", d.name, err)
	}
	return cp, nil
}

// Names lists the projections in the order they were given.
func (r *Runner) Names() []string {
	names := make([]string, len(r.projs))
	for i, p := range r.projs {
		names[i] = p.def.name
	}
	return names
}

// Definition returns the projection called name.
func (r *Runner) Definition(name string) (Definition, bool) {
	p, ok := r.byName[name]
	if !ok {
		return Definition{}, false
	}
	return p.def, true
}

// Run catches up with the log and then follows it, until ctx ends (then it
// checkpoints and returns nil) or the Log is closed (ErrClosed). Other
// errors (a storage failure, a projection that panics) are logged and
// retried with a backoff of up to 5 s, from the last checkpoint.
func (r *Runner) Run(ctx context.Context) error {
	r.passMu.Lock()
	defer r.passMu.Unlock()
	r.setRunning(true)
	defer r.setRunning(false)
	backoff := 100 * time.Millisecond
	for {
		err := r.pass(ctx, true, nil)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errRestart):
			continue
		case errors.Is(err, eventlog.ErrClosed):
			return err
		}
		r.logger.Error("projection runner failed; retrying from the last checkpoint", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// Progress reports how far a CatchUp has come: the global sequence folded
// and the one it is folding up to.
type Progress struct {
	Position uint64
	Target   uint64
}

// CatchUp folds every entry durable when it is called (and any rebuild
// requested before) and checkpoints, then returns. progress, if not nil, is
// called every few thousand entries and at the end. It fails with
// ErrRunning while Run runs.
func (r *Runner) CatchUp(ctx context.Context, progress func(Progress)) error {
	if !r.passMu.TryLock() {
		return ErrRunning
	}
	defer r.passMu.Unlock()
	for {
		err := r.pass(ctx, false, progress)
		if !errors.Is(err, errRestart) {
			return err
		}
	}
}

// Rebuild asks for projection name to be folded again from the start of
// the log. A running Run restarts its pass and rebuilds it there; otherwise
// the next CatchUp or Run does. Status shows the progress (Rebuilding,
// Lag). Queries see the old states until the rebuild's first checkpoint.
func (r *Runner) Rebuild(name string) error {
	if _, ok := r.byName[name]; !ok {
		return fmt.Errorf("projection %q: %w", name, ErrNotFound)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rebuilds = append(r.rebuilds, name)
	r.byName[name].rebuilding.Store(true)
	if r.kick != nil {
		r.kick()
	}
	return nil
}

func (r *Runner) setRunning(v bool) {
	r.mu.Lock()
	r.running = v
	r.mu.Unlock()
}

func (r *Runner) setKick(cancel context.CancelFunc) {
	r.mu.Lock()
	r.kick = cancel
	r.mu.Unlock()
}

// takeRebuilds returns and clears the pending rebuild requests.
func (r *Runner) takeRebuilds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := r.rebuilds
	r.rebuilds = nil
	return names
}

func (r *Runner) rebuildPending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rebuilds) > 0
}

// pass folds the log from the lowest projection position: up to the
// durable watermark at its start (follow false), or on until ctx ends or a
// rebuild is requested (follow true). It checkpoints before it returns.
func (r *Runner) pass(ctx context.Context, follow bool, progress func(Progress)) (err error) {
	passCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.setKick(cancel)
	defer r.setKick(nil)
	for _, name := range r.takeRebuilds() {
		p := r.byName[name]
		cp, err := r.reset(p.def)
		if err != nil {
			return err
		}
		r.mu.Lock()
		p.committed = cp
		r.mu.Unlock()
		r.resetMemory(p)
		p.absent = newAbsent()
		p.rebuilding.Store(true)
	}
	r.batch = r.newBatch()
	defer func() {
		if r.batch != nil {
			_ = r.batch.Close()
			r.batch = nil
		}
	}()
	var from uint64
	for i, p := range r.projs {
		if pos := p.pos.Load(); i == 0 || pos < from {
			from = pos
		}
	}
	from++
	target := r.log.Durable()
	sub, err := r.log.Subscribe(eventlog.SubscribeOptions{From: from, Types: r.commonTypes(), Buffer: 1024})
	if err != nil {
		return err
	}
	defer sub.Close()
	f := r.startFeed(passCtx, sub, follow, target)
	defer f.close() // before sub.Close: the feed's goroutine uses sub
	clean := true   // the states in memory are those of the last checkpoint
	defer func() {
		if rec := recover(); rec != nil {
			err = fmt.Errorf("projection fold panicked: %v", rec)
			clean = false
		}
		if !clean {
			// The batch with the evicted states is gone; fold again from
			// the checkpoint rather than from states nothing will write.
			for _, p := range r.projs {
				r.resetMemory(p)
			}
		}
	}()
	since, folded := 0, 0
	for b := range f.out {
		for i := range b.entries {
			e := &b.entries[i]
			clean = false
			if err := r.apply(e); err != nil {
				return err
			}
			since++
			folded++
			if since >= r.opts.checkpointEvery() || r.pendingFull() {
				if err := r.checkpoint(e.GlobalSeq); err != nil {
					return err
				}
				clean, since = true, 0
			}
			if progress != nil && folded%4096 == 0 {
				progress(Progress{Position: e.GlobalSeq, Target: target})
			}
		}
		next, idle, end, ferr := b.next, b.idle, b.end, b.err
		f.recycle(b)
		switch {
		case ferr != nil:
			cerr := r.checkpoint(next - 1)
			clean = cerr == nil
			if passCtx.Err() != nil && ctx.Err() == nil {
				return errors.Join(errRestart, cerr)
			}
			return errors.Join(ferr, cerr)
		case r.rebuildPending():
			if err := r.checkpoint(next - 1); err != nil {
				return err
			}
			clean = true
			return errRestart
		case end:
			if err := r.checkpoint(next - 1); err != nil {
				return err
			}
			clean = true
			r.caughtUp()
			if progress != nil {
				progress(Progress{Position: target, Target: target})
			}
			return nil
		case idle:
			// Caught up: make what was folded visible to queries before
			// waiting for more. When no state changed, the entries since
			// the last checkpoint were none a projection selects: their
			// positions count at once (Status, lag) but are committed
			// with the next checkpoint, so that a log busy with other
			// entries costs no fsync per run of them. A crash re-reads
			// at most CheckpointEvery of them.
			if r.statesChanged() || r.positionsBehind(next-1) {
				if err := r.checkpoint(next - 1); err != nil {
					return err
				}
			} else {
				r.advance(next - 1)
			}
			clean = true
			r.caughtUp()
		}
	}
	panic("unreachable: the feed's out channel is never closed")
}

// commonTypes is the subscription's type filter: the projections' pattern
// when they all share one, else none.
func (r *Runner) commonTypes() string {
	if len(r.projs) == 0 {
		return ""
	}
	t := r.projs[0].def.sel.Types
	for _, p := range r.projs[1:] {
		if p.def.sel.Types != t {
			return ""
		}
	}
	return t
}

// apply folds e into every projection that has not folded it yet and
// selects it.
func (r *Runner) apply(e *Entry) error {
	for _, p := range r.projs {
		if e.GlobalSeq <= p.pos.Load() {
			continue
		}
		p.pos.Store(e.GlobalSeq)
		key, ok := p.def.keyOf(&e.Entry, p.matchTypes)
		if !ok {
			continue
		}
		n, err := r.load(p, key)
		if err != nil {
			return err
		}
		n.state = p.def.apply(n.state, e)
		if !n.dirty {
			n.dirty = true
			p.dirty = append(p.dirty, n)
		}
		p.applied++
	}
	return nil
}

// load returns the cache node of key, reading the state from the pending
// evictions or the store, or starting it from Init, on a miss.
func (r *Runner) load(p *proj, key string) (*node, error) {
	if n, ok := p.cache.get(key); ok {
		return n, nil
	}
	var st any
	enc, ok := p.pending[key]
	switch {
	case ok:
	case p.absent != nil && !p.absent.has(key):
		st = p.def.init()
		p.keys++
	default:
		b, err := getCopy(r.store.db, stateKey(p.def.name, key))
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			st = p.def.init()
			p.keys++
		case err != nil:
			return nil, err
		default:
			enc = b
		}
	}
	if st == nil {
		s, err := p.def.decode(enc)
		if err != nil {
			return nil, fmt.Errorf("projection %s: stored state of %q does not decode: %w", p.def.name, key, err)
		}
		st = s
	}
	n, ev := p.cache.add(key, st)
	if ev != nil && ev.dirty {
		b, err := p.def.encode(ev.state)
		if err != nil {
			return nil, fmt.Errorf("projection %s: encode state of %q: %w", p.def.name, ev.key, err)
		}
		r.written(p, ev.key)
		if err := r.batch.Set(stateKey(p.def.name, ev.key), b, nil); err != nil {
			return nil, err
		}
		p.pending[ev.key] = b
		ev.dirty = false
	}
	return n, nil
}

// written notes that the pending batch writes the state of key.
func (r *Runner) written(p *proj, key string) {
	if p.absent != nil {
		p.absent.add(key)
	}
}

// pendingFull reports whether the evicted states waiting for a checkpoint
// hold as many states as the cache, so that they never outgrow it.
func (r *Runner) pendingFull() bool {
	for _, p := range r.projs {
		if len(p.pending) >= r.opts.cacheStates() {
			return true
		}
	}
	return false
}

// checkpoint commits every changed state and each projection's position
// (at least pos, the last global sequence the pass has read or skipped) in
// one synced batch. It writes nothing when nothing moved.
func (r *Runner) checkpoint(pos uint64) error {
	b := r.batch
	changed := b.Count() > 0
	cps := make([]Checkpoint, len(r.projs))
	r.advance(pos)
	for i, p := range r.projs {
		for _, n := range p.dirty {
			if !n.dirty {
				continue // evicted, and already in the batch
			}
			enc, err := p.def.appendEncode(r.scratch[:0], n.state)
			if err != nil {
				return fmt.Errorf("projection %s: encode state of %q: %w", p.def.name, n.key, err)
			}
			r.scratch = enc
			r.written(p, n.key)
			if err := b.Set(stateKey(p.def.name, n.key), enc, nil); err != nil {
				return err
			}
			n.dirty = false
		}
		cps[i] = Checkpoint{Version: p.def.version, Position: p.pos.Load(), Keys: p.keys, Applied: p.applied}
		r.mu.Lock()
		moved := cps[i] != p.committed
		r.mu.Unlock()
		if len(p.dirty) > 0 || moved {
			changed = true
			enc, _ := json.Marshal(cps[i])
			if err := b.Set(checkpointKey(p.def.name), enc, nil); err != nil {
				return err
			}
		}
	}
	if !changed {
		return nil
	}
	if err := r.store.commit(b); err != nil {
		return fmt.Errorf("commit projection checkpoint: %w", err)
	}
	r.batchSize = len(b.Repr())
	_ = b.Close()
	r.batch = r.newBatch()
	r.mu.Lock()
	for i, p := range r.projs {
		p.committed = cps[i]
		p.dirty = p.dirty[:0]
		clear(p.pending)
	}
	r.mu.Unlock()
	return nil
}

// statesChanged reports whether any state was folded or evicted since
// the last checkpoint.
func (r *Runner) statesChanged() bool {
	if r.batch.Count() > 0 {
		return true
	}
	for _, p := range r.projs {
		if len(p.dirty) > 0 {
			return true
		}
	}
	return false
}

// positionsBehind reports whether some projection's committed position is
// CheckpointEvery or more entries behind pos.
func (r *Runner) positionsBehind(pos uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.projs {
		if pos >= p.committed.Position+uint64(r.opts.checkpointEvery()) {
			return true
		}
	}
	return false
}

// advance raises each projection's position in memory to pos (the last
// global sequence the pass has read or skipped) without a checkpoint.
func (r *Runner) advance(pos uint64) {
	for _, p := range r.projs {
		if p.pos.Load() < pos {
			p.pos.Store(pos)
		}
	}
}

// newBatch returns the batch of the next checkpoint, sized like the last
// one with a quarter more room (at most 64 MiB).
func (r *Runner) newBatch() *pebble.Batch {
	return r.store.db.NewBatchWithSize(min(r.batchSize+r.batchSize/4, 64<<20))
}

// resetMemory drops what p holds in memory beyond its last checkpoint.
func (r *Runner) resetMemory(p *proj) {
	r.mu.Lock()
	cp := p.committed
	r.mu.Unlock()
	p.cache = newLRU(r.opts.cacheStates())
	p.dirty = nil
	p.pending = make(map[string][]byte)
	p.pos.Store(cp.Position)
	p.applied, p.keys = cp.Applied, cp.Keys
}

// caughtUp ends the rebuilds a pass has started: the projections have
// folded the whole log. Rebuilds requested meanwhile wait for their pass.
func (r *Runner) caughtUp() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rebuilds) > 0 {
		return
	}
	for _, p := range r.projs {
		p.rebuilding.Store(false)
	}
}

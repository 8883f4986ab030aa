package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/jido-bus/jido-bus/eventlog"
)

// Status describes one projection of a Runner.
type Status struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Position is the global sequence folded so far (in memory);
	// Checkpoint the one queries see.
	Position   uint64 `json:"position"`
	Checkpoint uint64 `json:"checkpoint"`
	// Head is the log's durable watermark; Lag = Head - Position, the
	// entries behind the head (of any stream or type).
	Head uint64 `json:"head"`
	Lag  uint64 `json:"lag"`
	// Keys is the number of states, Applied the entries folded since the
	// last rebuild, both as of the checkpoint.
	Keys    uint64 `json:"keys"`
	Applied uint64 `json:"applied"`
	// Rebuilding is true while a requested rebuild has not caught up.
	Rebuilding bool `json:"rebuilding,omitempty"`
	// Running is true while Run follows the log.
	Running bool `json:"running"`
	// Damaged counts damaged log entries the runner skipped.
	Damaged uint64 `json:"damaged,omitempty"`
}

// Status returns the status of every projection, in definition order.
func (r *Runner) Status() []Status {
	head := r.log.Durable()
	r.mu.Lock()
	defer r.mu.Unlock()
	pending := make(map[string]bool, len(r.rebuilds))
	for _, n := range r.rebuilds {
		pending[n] = true
	}
	out := make([]Status, len(r.projs))
	for i, p := range r.projs {
		pos := p.pos.Load()
		if pending[p.def.name] {
			pos = 0
		}
		st := Status{
			Name: p.def.name, Version: p.def.version,
			Position: pos, Checkpoint: p.committed.Position, Head: head,
			Keys: p.committed.Keys, Applied: p.committed.Applied,
			Running: r.running, Damaged: r.damaged.Load(),
		}
		if head > pos {
			st.Lag = head - pos
		}
		st.Rebuilding = pending[p.def.name] || p.rebuilding.Load()
		out[i] = st
	}
	return out
}

// State is a projection's state for one key, as JSON, with the position it
// reflects: every entry up to global sequence Position has been folded in.
type State struct {
	Name     string          `json:"name"`
	Key      string          `json:"key"`
	Position uint64          `json:"position"`
	State    json.RawMessage `json:"state"`
}

// Get returns the state of key in projection name as of its last
// checkpoint. An unknown projection or key is an error wrapping
// ErrNotFound.
func (r *Runner) Get(name, key string) (State, error) {
	if _, ok := r.byName[name]; !ok {
		return State{}, fmt.Errorf("projection %q: %w", name, ErrNotFound)
	}
	b, cp, err := r.store.State(name, key)
	if err != nil {
		return State{}, err
	}
	return State{Name: name, Key: key, Position: cp.Position, State: b}, nil
}

// Keys lists keys of projection name, as Store.Keys does.
func (r *Runner) Keys(name, prefix, after string, limit int) ([]string, error) {
	if _, ok := r.byName[name]; !ok {
		return nil, fmt.Errorf("projection %q: %w", name, ErrNotFound)
	}
	return r.store.Keys(name, prefix, after, limit)
}

// Until bounds a fold at a past position: entries with a global sequence
// above GlobalSeq, or (for a per-stream projection) a stream sequence above
// Seq, are left out. Zero fields do not bound.
type Until struct {
	GlobalSeq uint64 `json:"global_seq,omitempty"`
	Seq       uint64 `json:"seq,omitempty"`
}

// At folds the state of key in projection name afresh from the log, up to
// until, for looking at the past. It reads only the key's stream for a
// per-stream projection, and the whole log otherwise. Position in the
// result is the global sequence of the last entry folded. It does not
// touch the Store. A key with no entries is an error wrapping ErrNotFound.
func (r *Runner) At(ctx context.Context, name, key string, until Until) (State, error) {
	p, ok := r.byName[name]
	if !ok {
		return State{}, fmt.Errorf("projection %q: %w", name, ErrNotFound)
	}
	d := p.def
	opts := eventlog.ReadOptions{Types: d.sel.Types}
	var it iter.Seq2[eventlog.Entry, error]
	if d.sel.PerStream {
		it = r.log.ReadStream(d.sel.StreamPrefix+key, opts)
	} else {
		it = r.log.ReadAll(opts)
	}
	st, last, n, err := fold(ctx, d, key, it, until)
	if err != nil {
		return State{}, fmt.Errorf("projection %s key %q: %w", name, key, err)
	}
	if n == 0 && d.sel.PerStream {
		return State{}, fmt.Errorf("projection %s has no entries for key %q up to %+v: %w", name, key, until, ErrNotFound)
	}
	b, err := d.encode(st)
	if err != nil {
		return State{}, err
	}
	return State{Name: name, Key: key, Position: last, State: b}, nil
}

// fold applies the entries of it that d selects for key, in order, up to
// until, to a fresh state.
func fold(ctx context.Context, d Definition, key string, it iter.Seq2[eventlog.Entry, error], until Until) (st any, last uint64, n int, err error) {
	st = d.init()
	for e, err := range it {
		if errors.Is(err, eventlog.ErrNotFound) {
			return st, 0, 0, ErrNotFound
		}
		if _, ok := errors.AsType[*eventlog.CorruptError](err); ok {
			continue
		}
		if err != nil {
			return nil, 0, 0, err
		}
		if (until.GlobalSeq > 0 && e.GlobalSeq > until.GlobalSeq) || (until.Seq > 0 && e.Seq > until.Seq) {
			break
		}
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, 0, 0, ctx.Err()
		}
		if k, ok := d.key(&e); !ok || k != key {
			continue
		}
		st = d.apply(st, &Entry{Entry: e})
		last = e.GlobalSeq
		n++
	}
	return st, last, n, nil
}

package assets

import (
	"sync"
	"sync/atomic"
)

// Set holds a project's current Snapshot behind one atomic pointer: a
// reader calls Load and gets the old set or the new one, never a mix, and
// never waits for a reload. The zero Set holds nil until the first Swap.
type Set struct {
	cur atomic.Pointer[Snapshot]
	mu  sync.Mutex // serializes Reload so versions and the file cache chain
}

// Load returns the current snapshot (nil before the first Swap). Safe for
// any number of goroutines.
func (s *Set) Load() *Snapshot { return s.cur.Load() }

// Swap makes next current and returns the one it replaced.
func (s *Set) Swap(next *Snapshot) (old *Snapshot) { return s.cur.Swap(next) }

// Reload loads dataDir again with the current snapshot as Previous (so
// only changed files are read), swaps the result in and returns the old
// and new snapshots with their Diff. Concurrent Reloads run one after
// the other; on error the current snapshot stays.
func (s *Set) Reload(dataDir string, opts Options) (old, next *Snapshot, changes Changes, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	opts.Previous = s.cur.Load()
	next, err = Load(dataDir, opts)
	if err != nil {
		return opts.Previous, nil, Changes{}, err
	}
	old = s.cur.Swap(next)
	return old, next, Diff(old, next), nil
}

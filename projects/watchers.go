package projects

import "sync"

// assetWatchers are the functions OnAssetsChanged registered.
type assetWatchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(project string)
}

// OnAssetsChanged registers fn to be told, by project id, when what a
// project offers may have changed: its assets reloaded with a change
// (the watcher or Reload, after project.assets.reloaded is committed and
// the new catalog is in place), its policy changed (after
// project.policy.changed is committed and the new policy is in force),
// or the project opened or closed. fn runs
// on the goroutine that made the change, holding none of the engine's
// locks, so it may call the engine; it should return soon. cancel stops
// the calls (one already running finishes).
func (e *Engine) OnAssetsChanged(fn func(project string)) (cancel func()) {
	w := &e.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func(string){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	}
}

// notify calls every registered function with project.
func (w *assetWatchers) notify(project string) {
	w.mu.Lock()
	fns := make([]func(string), 0, len(w.fns))
	for _, fn := range w.fns {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn(project)
	}
}

package assets

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the watcher waits after the last file event
// of a burst before it reloads.
const DefaultDebounce = 200 * time.Millisecond

// maxWaitFactor bounds a burst: files changing without pause (a long git
// checkout) still reload every maxWaitFactor×Debounce.
const maxWaitFactor = 10

// stateDir is the data dir's folder the node writes itself
// (projects/layout's state): no asset lives there, so it is not watched.
const stateDir = "state"

// WatchOptions tune Watch. The zero value is the defaults.
type WatchOptions struct {
	// Debounce is the quiet time after a file event before the reload;
	// 0 means DefaultDebounce.
	Debounce time.Duration
	// Load is passed to Set.Reload (its Previous is the Set's snapshot).
	Load Options
	// OnChange receives each reload that changed the set; a reload that
	// changes nothing (same Changes.Empty) calls nothing. nil drops them.
	OnChange func(old, next *Snapshot, changes Changes)
	// OnReload is called after every reload, changed or not, once
	// OnChange (if any) has returned: a file of the data dir that is not
	// an asset (a project's policy.yaml) may be what changed, and its
	// owner checks it then. nil calls nothing.
	OnReload func()
	// OnError receives what went wrong: a folder that cannot be watched,
	// an error from fsnotify (events lost: a reload follows), a reload
	// that failed (the Set keeps its snapshot). nil drops them.
	OnError func(error)

	// Tests only: the clock behind the debounce, and hooks called after
	// each event is handled and after each reload.
	clock       clock
	afterEvent  func(fsnotify.Event)
	afterReload func(Changes, error)
}

// clock is the debounce's time source.
type clock interface {
	Now() time.Time
	After(time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Watcher reloads a Set when files under its data dir change. One
// goroutine owns it: callbacks are called one at a time from it, and must
// not call Close (Close waits for them).
type Watcher struct {
	set     *Set
	dataDir string
	opts    WatchOptions
	fsw     *fsnotify.Watcher
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// Watch starts watching dataDir and every folder below it (folders
// created later included; hidden folders and state/ excepted), and
// reloads set a debounce after each burst of changes. The folder holding
// dataDir is watched too, for dataDir itself: moved away or removed (a
// checkout, a clean), its loss is a reload (which fails, and says so);
// back, it is watched again whole and reloaded. The data dir must exist;
// Close stops the watcher.
func Watch(set *Set, dataDir string, opts WatchOptions) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.clock == nil {
		opts.clock = realClock{}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dataDir, err)
	}
	w := &Watcher{set: set, dataDir: filepath.Clean(dataDir), opts: opts, fsw: fsw, stop: make(chan struct{}), done: make(chan struct{})}
	if err := fsw.Add(w.dataDir); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", dataDir, err)
	}
	// Best effort: without it a data dir moved away and back is no
	// longer watched, as before.
	if err := fsw.Add(filepath.Dir(w.dataDir)); err != nil {
		w.report(fmt.Errorf("watch %s for %s: %w", filepath.Dir(w.dataDir), filepath.Base(w.dataDir), err))
	}
	w.addTree(w.dataDir)
	go w.run()
	return w, nil
}

// Close stops the watcher and waits for its goroutine (and a reload or
// callback under way) to end. It may be called more than once.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		err = w.fsw.Close()
	})
	return err
}

func (w *Watcher) run() {
	defer close(w.done)
	var fire <-chan time.Time
	var since time.Time // the first event of the pending burst
	arm := func() {
		now := w.opts.clock.Now()
		if since.IsZero() {
			since = now
		}
		wait := min(w.opts.Debounce, since.Add(maxWaitFactor*w.opts.Debounce).Sub(now))
		fire = w.opts.clock.After(max(wait, 0))
	}
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.handle(ev) {
				arm()
			}
			if w.opts.afterEvent != nil {
				w.opts.afterEvent(ev)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if w.fsError(err) {
				arm()
			}
		case <-fire:
			fire, since = nil, time.Time{}
			w.reload()
		}
	}
}

// handle keeps the watches in step with the folders (a new folder is
// watched with everything already in it; a removed or renamed one is
// dropped) and reports whether the event can change the set.
func (w *Watcher) handle(ev fsnotify.Event) bool {
	if w.ignored(ev.Name) {
		return false
	}
	switch {
	case ev.Has(fsnotify.Create):
		w.addTree(ev.Name)
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		w.removeTree(ev.Name)
	}
	return true
}

// fsError reports an fsnotify error; after an overflow events were lost,
// so the watches are renewed and a reload is due.
func (w *Watcher) fsError(err error) (reload bool) {
	w.report(fmt.Errorf("watching %s: %w", w.dataDir, err))
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.addTree(w.dataDir)
		return true
	}
	return false
}

func (w *Watcher) reload() {
	old, next, changes, err := w.set.Reload(w.dataDir, w.opts.Load)
	if err != nil {
		w.report(fmt.Errorf("reload %s: %w", w.dataDir, err))
	} else if !changes.Empty() && w.opts.OnChange != nil {
		w.opts.OnChange(old, next, changes)
	}
	if w.opts.OnReload != nil {
		w.opts.OnReload()
	}
	if w.opts.afterReload != nil {
		w.opts.afterReload(changes, err)
	}
}

func (w *Watcher) report(err error) {
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
}

// ignored reports paths no asset can be under: hidden names (editors'
// swap files, .git) anywhere below the data dir, its state folder, and
// everything beside the data dir in the folder watched for it.
func (w *Watcher) ignored(path string) bool {
	rel, err := filepath.Rel(w.dataDir, path)
	if err != nil {
		return true
	}
	if rel == "." {
		return false
	}
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return true
	}
	if rel == stateDir || strings.HasPrefix(rel, stateDir+"/") {
		return true
	}
	for part := range strings.SplitSeq(rel, "/") {
		if hidden(part) {
			return true
		}
	}
	return false
}

// addTree watches dir and every folder below it. Symlinks are not
// followed (WalkDir does not). A path that is not a folder, or is gone
// already, is nothing to watch.
func (w *Watcher) addTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.report(fmt.Errorf("watch %s: %w", p, err))
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != w.dataDir && w.ignored(p) {
			return fs.SkipDir
		}
		if err := w.fsw.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.report(fmt.Errorf("watch %s: %w (on Linux, raise fs.inotify.max_user_watches)", p, err))
		}
		return nil
	})
}

// removeTree drops the watches on path and below: a folder renamed out
// of the data dir would otherwise still be watched where it went.
func (w *Watcher) removeTree(path string) {
	for _, p := range w.fsw.WatchList() {
		if p == path || strings.HasPrefix(p, path+string(filepath.Separator)) {
			_ = w.fsw.Remove(p) // already gone with its folder: nothing to do
		}
	}
}

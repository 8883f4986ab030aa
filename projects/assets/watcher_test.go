package assets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// fakeClock fires the debounce only when the test says so.
type fakeClock struct {
	mu sync.Mutex
	ch chan time.Time // the armed debounce, nil when none
}

func (c *fakeClock) Now() time.Time { return time.Unix(0, 0) }

func (c *fakeClock) After(time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ch = make(chan time.Time, 1)
	return c.ch
}

// fire ends the armed debounce; false when none is armed.
func (c *fakeClock) fire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		return false
	}
	c.ch <- time.Time{}
	c.ch = nil
	return true
}

type watchRig struct {
	t       *testing.T
	dir     string
	set     *Set
	w       *Watcher
	clock   *fakeClock
	events  chan fsnotify.Event
	reloads chan Changes
	changes chan Changes
	settled chan struct{}
	errs    chan error
}

// startWatch loads dir into a Set and watches it; fake selects the fake
// clock, else the debounce is real and short.
func startWatch(t *testing.T, dir string, fake bool) *watchRig {
	t.Helper()
	r := &watchRig{t: t, dir: dir, set: &Set{}, events: make(chan fsnotify.Event, 100_000), reloads: make(chan Changes, 1000), changes: make(chan Changes, 1000), settled: make(chan struct{}, 1000), errs: make(chan error, 1000)}
	if _, _, _, err := r.set.Reload(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	opts := WatchOptions{
		Debounce:    10 * time.Millisecond,
		OnChange:    func(_, _ *Snapshot, c Changes) { r.changes <- c },
		OnReload:    func() { r.settled <- struct{}{} },
		OnError:     func(err error) { r.errs <- err },
		afterEvent:  func(ev fsnotify.Event) { r.events <- ev },
		afterReload: func(c Changes, _ error) { r.reloads <- c },
	}
	if fake {
		r.clock = &fakeClock{}
		opts.clock = r.clock
	}
	w, err := Watch(r.set, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.w = w
	return r
}

func (r *watchRig) close() {
	if err := r.w.Close(); err != nil {
		r.t.Error(err)
	}
}

// change waits for an OnChange call that ok accepts, skipping others.
func (r *watchRig) change(what string, ok func(Changes) bool) Changes {
	r.t.Helper()
	var got Changes
	testkit.Eventually(r.t, "a change: "+what, func() bool {
		for {
			select {
			case c := <-r.changes:
				if ok(c) {
					got = c
					return true
				}
			case err := <-r.errs:
				r.t.Fatalf("waiting for %s: error %v", what, err)
			default:
				return false
			}
		}
	})
	return got
}

// event waits until the watcher has handled an event that ok accepts.
func (r *watchRig) event(what string, ok func(fsnotify.Event) bool) {
	r.t.Helper()
	testkit.Eventually(r.t, "an event: "+what, func() bool {
		for {
			select {
			case ev := <-r.events:
				if ok(ev) {
					return true
				}
			default:
				return false
			}
		}
	})
}

func (r *watchRig) path(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

func (r *watchRig) watched(rel string) bool { return slices.Contains(r.w.fsw.WatchList(), r.path(rel)) }

func TestWatcherSeesFoldersCreatedAfterTheStart(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"skills/a/SKILL.md": skillMD("a", "d")}), false)
	defer r.close()

	write(t, r.dir, "skills/new/SKILL.md", skillMD("new", "d"))
	r.change("skill new added", func(c Changes) bool { return slices.Equal(c.Skills.Added, []string{"new"}) })
	// An edit inside the new folder alone is seen: the folder is watched.
	write(t, r.dir, "skills/new/SKILL.md", skillMD("new", "changed"))
	r.change("skill new changed", func(c Changes) bool { return slices.Equal(c.Skills.Changed, []string{"new"}) })
	if r.set.Load().Skills["new"].Description != "changed" {
		t.Fatal("set not reloaded")
	}
	// Folders made in one go, several levels deep, are all watched.
	write(t, r.dir, "skill_graph/a/b/c/deep.md", "# Deep\n")
	r.change("note added", func(c Changes) bool { return slices.Equal(c.Notes.Added, []string{"a/b/c/deep"}) })
	write(t, r.dir, "skill_graph/a/b/c/deep.md", "# Deeper\n")
	r.change("note changed", func(c Changes) bool { return slices.Equal(c.Notes.Changed, []string{"a/b/c/deep"}) })
}

func TestWatcherReportsEditsAndRemovals(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/c.md": "C\n", "commands/git/commit.md": "Commit\n"}), false)
	defer r.close()

	write(t, r.dir, "commands/c.md", "C, edited\n")
	r.change("command c changed", func(c Changes) bool { return slices.Equal(c.Commands.Changed, []string{"c"}) })
	if err := os.Remove(r.path("commands/c.md")); err != nil {
		t.Fatal(err)
	}
	r.change("command c removed", func(c Changes) bool { return slices.Equal(c.Commands.Removed, []string{"c"}) })
	// A removed folder's watch goes away with it.
	if !r.watched("commands/git") {
		t.Fatal("commands/git not watched")
	}
	if err := os.RemoveAll(r.path("commands/git")); err != nil {
		t.Fatal(err)
	}
	r.change("command git:commit removed", func(c Changes) bool { return slices.Equal(c.Commands.Removed, []string{"git:commit"}) })
	if r.watched("commands/git") {
		t.Fatalf("commands/git still watched: %v", r.w.fsw.WatchList())
	}
}

// A folder renamed out of the data dir is no longer watched: edits where
// it went are no business of the project's.
func TestWatcherDropsAFolderRenamedAway(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"skills/a/SKILL.md": skillMD("a", "d"), "skills/a/sub/x.txt": "x"}), true)
	defer r.close()
	away := filepath.Join(t.TempDir(), "a")
	if err := os.Rename(r.path("skills/a"), away); err != nil {
		t.Fatal(err)
	}
	r.event("rename of skills/a", func(ev fsnotify.Event) bool { return ev.Name == r.path("skills/a") && ev.Has(fsnotify.Rename) })
	for _, p := range r.w.fsw.WatchList() {
		if strings.HasPrefix(p, r.path("skills/a")) {
			t.Fatalf("%s still watched after the rename", p)
		}
	}
}

// TestWatcherFollowsTheDataDirMovedAwayAndBack: a data dir moved away (a
// checkout, a clean) and back is watched again whole: an edit after its
// return reloads (it was no longer seen, while the project said it was
// watching).
func TestWatcherFollowsTheDataDirMovedAwayAndBack(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/keep.md": "K\n"}), true)
	defer r.close()
	// Files beside the data dir, in the folder watched for it, arm nothing.
	write(t, filepath.Dir(r.dir), "beside.txt", "x")
	r.event("a file beside the data dir written", func(ev fsnotify.Event) bool {
		return ev.Name == filepath.Join(filepath.Dir(r.dir), "beside.txt") && ev.Has(fsnotify.Write)
	})
	if r.clock.fire() {
		t.Fatal("a file beside the data dir armed a reload")
	}

	away := r.dir + "-away"
	if err := os.Rename(r.dir, away); err != nil {
		t.Fatal(err)
	}
	r.event("the data dir moved away", func(ev fsnotify.Event) bool { return ev.Name == r.dir && ev.Has(fsnotify.Rename) })
	if err := os.Rename(away, r.dir); err != nil {
		t.Fatal(err)
	}
	r.event("the data dir back", func(ev fsnotify.Event) bool { return ev.Name == r.dir && ev.Has(fsnotify.Create) })
	if !r.clock.fire() {
		t.Fatal("no reload armed by the data dir's moves")
	}
	<-r.reloads
	// One write (not os.WriteFile's create, then write), so that no event
	// of it comes after the debounce fired and arms another.
	if err := os.Rename(r.path("commands/keep.md"), r.path("commands/new.md")); err != nil {
		t.Fatal(err)
	}
	r.event("commands/new.md", func(ev fsnotify.Event) bool { return ev.Name == r.path("commands/new.md") })
	if !r.clock.fire() {
		t.Fatal("an edit after the data dir came back armed no reload")
	}
	c := r.change("new.md added", func(c Changes) bool { return len(c.Commands.Added) > 0 })
	if !slices.Equal(c.Commands.Added, []string{"new"}) {
		t.Fatalf("changes %+v", c)
	}
}

func TestWatcherBurstOfWritesIsOneReload(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/keep.md": "K\n"}), true)
	defer r.close()

	pending := map[string]bool{}
	for i := range 100 {
		rel := fmt.Sprintf("commands/c%03d.md", i)
		pending[r.path(rel)] = true
		write(t, r.dir, rel, "burst\n")
	}
	// Every write has reached the watcher before the debounce ends.
	r.event("a write to each of the 100 files", func(ev fsnotify.Event) bool {
		if ev.Has(fsnotify.Write) {
			delete(pending, ev.Name)
		}
		return len(pending) == 0
	})
	if !r.clock.fire() {
		t.Fatal("no debounce armed after 100 writes")
	}
	c := r.change("100 commands added", func(Changes) bool { return true })
	if len(c.Commands.Added) != 100 {
		t.Fatalf("added %d commands", len(c.Commands.Added))
	}
	<-r.reloads
	if len(r.reloads) != 0 || r.clock.fire() {
		t.Fatalf("more than one reload for one burst (%d more done, one armed)", len(r.reloads))
	}
}

func TestWatcherEditThatChangesNothingCallsNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/c.md": "C\n"}), true)
	defer r.close()

	// Same bytes, new mtime, in one write: os.WriteFile's O_TRUNC would
	// be a second Write event, which may come after the debounce below
	// fired and arm another (a flake seen on a loaded machine).
	f, err := os.OpenFile(r.path("commands/c.md"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("C\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r.event("the rewrite", func(ev fsnotify.Event) bool { return ev.Name == r.path("commands/c.md") && ev.Has(fsnotify.Write) })
	if !r.clock.fire() {
		t.Fatal("no debounce armed")
	}
	select {
	case c := <-r.reloads:
		if !c.Empty() {
			t.Fatalf("reload changed %+v", c)
		}
	case <-time.After(testkit.Timeout):
		t.Fatal("no reload")
	}
	if len(r.changes) != 0 {
		t.Fatalf("OnChange called for a reload that changed nothing: %+v", <-r.changes)
	}
	// Hidden files (editor swap files) and state/ do not even arm a reload.
	write(t, r.dir, "commands/.c.md.swp", "swap")
	r.event("the swap file", func(ev fsnotify.Event) bool { return ev.Name == r.path("commands/.c.md.swp") && ev.Has(fsnotify.Write) })
	write(t, r.dir, "state/x", "node state")
	r.event("state/ created", func(ev fsnotify.Event) bool { return ev.Name == r.path("state") })
	if w, f := r.watched("state"), r.clock.fire(); w || f {
		t.Fatalf("state/ or a hidden file armed a reload: state watched %v, a debounce armed %v", w, f)
	}
}

// TestWatcherOnReloadHearsFilesThatAreNoAssets: a file of the data dir
// that is not an asset (a project's policy.yaml) changes no asset, so
// OnChange is not called, but OnReload is: its owner checks the file then.
func TestWatcherOnReloadHearsFilesThatAreNoAssets(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/c.md": "C\n"}), true)
	defer r.close()
	// Its last event: os.WriteFile creates, then writes; an event after
	// the debounce fired would arm another, which nothing fires.
	write(t, r.dir, "policy.yaml", "tools: {run_command: ask}\n")
	r.event("policy.yaml written", func(ev fsnotify.Event) bool { return ev.Name == r.path("policy.yaml") && ev.Has(fsnotify.Write) })
	if !r.clock.fire() {
		t.Fatal("no debounce armed for policy.yaml")
	}
	select {
	case <-r.settled:
	case <-time.After(testkit.Timeout):
		t.Fatal("OnReload not called after the reload policy.yaml caused")
	}
	if len(r.changes) != 0 {
		t.Fatalf("OnChange called for a file that is no asset: %+v", <-r.changes)
	}
}

func TestWatcherReportsAFailedReload(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/c.md": "C\n"}), true)
	defer r.close()
	before := r.set.Load()
	if err := os.RemoveAll(r.dir); err != nil {
		t.Fatal(err)
	}
	r.event("the data dir removed", func(ev fsnotify.Event) bool { return ev.Name == r.dir && ev.Has(fsnotify.Remove) })
	if !r.clock.fire() {
		t.Fatal("no debounce armed")
	}
	select {
	case err := <-r.errs:
		if !errors.Is(err, ErrDataDir) || !strings.Contains(err.Error(), r.dir) {
			t.Fatalf("error %v", err)
		}
	case <-time.After(testkit.Timeout):
		t.Fatal("no error reported")
	}
	if r.set.Load() != before {
		t.Fatal("a failed reload replaced the snapshot")
	}
}

// Events lost to an fsnotify overflow are not lost changes: the error is
// reported and a reload is due.
func TestWatcherOverflowIsReportedAndReloads(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/c.md": "C\n"}), true)
	r.close() // the loop is stopped: fsError is called here alone
	if !r.w.fsError(fsnotify.ErrEventOverflow) {
		t.Fatal("an overflow does not call for a reload")
	}
	if err := <-r.errs; !errors.Is(err, fsnotify.ErrEventOverflow) {
		t.Fatalf("error %v", err)
	}
}

func TestWatchMissingDataDirIsAnError(t *testing.T) {
	defer goleak.VerifyNone(t)
	if _, err := Watch(&Set{}, filepath.Join(t.TempDir(), "nope"), WatchOptions{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err %v", err)
	}
}

// Close with a burst pending, twice: it returns, and nothing is left.
func TestWatcherCloseWithAPendingBurst(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := startWatch(t, tree(t, map[string]string{"commands/c.md": "C\n"}), true)
	write(t, r.dir, "commands/c.md", "C2\n")
	r.event("the write", func(ev fsnotify.Event) bool { return ev.Has(fsnotify.Write) })
	r.close()
	r.close()
	if len(r.reloads) != 0 {
		t.Fatal("reloaded after Close")
	}
}

package projections

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// fullDisk fails every write and sync of a WAL file while armed, as a
// full disk does.
type fullDisk struct{ armed atomic.Bool }

func (f *fullDisk) String() string { return "full disk" }

func (f *fullDisk) MaybeError(op errorfs.Op) error {
	if !f.armed.Load() || !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		return fmt.Errorf("no space left on device: %w", errorfs.ErrInjected)
	}
	return nil
}

// failures is a slog handler that hands the error of every record on.
type failures chan string

func (f failures) Enabled(context.Context, slog.Level) bool { return true }
func (f failures) WithAttrs([]slog.Attr) slog.Handler       { return f }
func (f failures) WithGroup(string) slog.Handler            { return f }
func (f failures) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			select {
			case f <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}

// TestStoreOnAFullDiskFailsItsCommits: a checkpoint the projection
// store cannot write is an error of the runner saying what to do, and
// every later commit fails the same way; the process goes on (Pebble's
// fatal error used to exit it with 1, before the node could stop with
// its own exit code), and the store closes.
func TestStoreOnAFullDiskFailsItsCommits(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	disk := &fullDisk{}
	s, err := OpenStore(filepath.Join(dir, "projections"), StoreOptions{FS: errorfs.Wrap(vfs.Default, disk)})
	if err != nil {
		t.Fatal(err)
	}
	appendRound(t, l, 0, 3)
	errs := make(failures, 1)
	r, err := NewRunner(l, s, Options{Logger: slog.New(errs)}, MustDefine[*tallyState](tally{}))
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(t, r)
	testkit.Eventually(t, "catch-up", caughtUp(r))
	disk.armed.Store(true)
	appendRound(t, l, 1, 3)
	select {
	case msg := <-errs:
		if !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, "restart the node") {
			t.Fatalf("the runner failed with %q, want the store's failure saying what to do", msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no failure reported after the store could not write")
	}
	stop()
	b := s.db.NewBatch()
	defer b.Close()
	if err := s.commit(b); err == nil {
		t.Fatal("a commit after the failure succeeded")
	}
	disk.armed.Store(false)
	_ = s.Close() // may report the failure; it must not end the process
}

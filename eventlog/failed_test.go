package eventlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// walSyncFault fails every sync of a WAL file (*.log) while armed, as a
// full or failing disk does.
type walSyncFault struct {
	armed    atomic.Bool
	injected atomic.Int64
}

func (f *walSyncFault) String() string { return "wal sync fault" }

func (f *walSyncFault) MaybeError(op errorfs.Op) error {
	if !f.armed.Load() || !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		f.injected.Add(1)
		return fmt.Errorf("no space left on device: %w", errorfs.ErrInjected)
	}
	return nil
}

// TestSyncFailurePoisons: after one failed WAL sync no append reports
// success again, even once the disk works again, every failure is the
// typed ErrFailed that callers see as "unavailable", and what was
// acknowledged is exactly what is there after a reopen.
func TestSyncFailurePoisons(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewMem()
	fault := &walSyncFault{}
	l, err := Open("db", Options{FS: errorfs.Wrap(mem, fault)})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var (
		acked    sync.Map // "w<w>/<n>" of every acknowledged append
		failedAt [writers]atomic.Uint64
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	for w := range writers {
		wg.Go(func() {
			for n := uint64(1); ; n++ {
				id := fmt.Sprintf("w%d/%d", w, n)
				_, err := l.Append(ctx, fmt.Sprintf("agent/w%d", w), AnyVersion, sig("t.x", id))
				if err == nil {
					if firstErr.Load() != nil && failedAt[w].Load() != 0 {
						t.Errorf("writer %d: append %d succeeded after this writer saw the log fail", w, n)
					}
					acked.Store(id, true)
					continue
				}
				firstErr.CompareAndSwap(nil, &err)
				if failedAt[w].Load() == 0 {
					failedAt[w].Store(n)
				}
				if !errors.Is(err, ErrFailed) {
					t.Errorf("writer %d append %d: %v, want ErrFailed", w, n, err)
				}
				if typ := bus.ErrorType(err); typ != bus.ReasonUnavailable {
					t.Errorf("writer %d append %d: error type %q, want %q (%v)", w, n, typ, bus.ReasonUnavailable, err)
				}
				if n > failedAt[w].Load()+50 {
					return
				}
			}
		})
	}
	testkit.Eventually(t, "some appends", func() bool { return l.Durable() > 100 })
	fault.armed.Store(true)
	testkit.Eventually(t, "an injected sync error", func() bool { return fault.injected.Load() > 0 })
	fault.armed.Store(false) // the disk "has space again": the log stays failed
	wg.Wait()
	if err := l.Failed(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Failed() = %v after a sync error", err)
	}
	msg := bus.AsError(*firstErr.Load()).Message
	if !strings.Contains(msg, "restart") || !strings.Contains(msg, "disk") {
		t.Fatalf("the error does not say what to do: %q", msg)
	}
	select {
	case <-l.FailedNotify():
	default:
		t.Fatal("FailedNotify's channel is open after a failure")
	}
	durable := l.Durable()
	_ = l.Close() // may report the failure; it must not hang or panic

	// Reopen on the same (now healthy) files: everything acknowledged is
	// there; nothing above the durable watermark was acknowledged.
	l2, err := Open("db", Options{FS: mem})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l2.Close()
	there := make(map[string]bool)
	for e, err := range l2.ReadAll(ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		there[e.Event.ID()] = true
	}
	n := 0
	acked.Range(func(k, _ any) bool {
		n++
		if !there[k.(string)] {
			t.Errorf("acknowledged %s is missing after reopen", k)
		}
		return true
	})
	if uint64(n) > durable {
		t.Fatalf("%d appends acknowledged, durable watermark %d", n, durable)
	}
	if _, err := l2.Append(ctx, "agent/after", AnyVersion, sig("t.x", "after")); err != nil {
		t.Fatalf("append after reopen: %v", err)
	}
}

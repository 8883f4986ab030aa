package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// walSyncFault fails every sync of a WAL file while armed: a full disk.
type walSyncFault struct{ armed atomic.Bool }

func (f *walSyncFault) String() string { return "wal sync fault" }

func (f *walSyncFault) MaybeError(op errorfs.Op) error {
	if f.armed.Load() && strings.HasSuffix(op.Path, ".log") &&
		(op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo) {
		return fmt.Errorf("no space left on device: %w", errorfs.ErrInjected)
	}
	return nil
}

// TestLogFailure: once the log cannot sync, a call is answered
// "unavailable" with what to do, ping reports the node unhealthy, and
// Failed tells the owner (serve exits non-zero on it).
func TestLogFailure(t *testing.T) {
	fault := &walSyncFault{}
	n, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"},
		logFS: errorfs.Wrap(vfs.Default, fault),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// NATS may be gone: a second is enough to give up on the drain.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.Shutdown(ctx)
	}()
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	inc, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Runtime().Call(ctx, "c1", inc); err != nil {
		t.Fatal(err)
	}
	ping := func() bus.ReplyStatus {
		t.Helper()
		m, err := n.Conn().Request(n.subjects.Ping(), nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var st bus.ReplyStatus
		if err := json.Unmarshal(m.Data, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := ping(); st.Err() != nil {
		t.Fatalf("ping before the failure: %v", st.Err())
	}

	fault.armed.Store(true)
	inc2, _ := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
	_, err = n.Runtime().Call(ctx, "c1", inc2)
	if typ := bus.ErrorType(err); typ != bus.ReasonUnavailable {
		t.Fatalf("call on a failed log: type %q (%v), want %s", typ, err, bus.ReasonUnavailable)
	}
	if msg := bus.AsError(err).Message; !strings.Contains(msg, "free disk space") || !strings.Contains(msg, "restart") {
		t.Fatalf("the error does not say what to do: %q", msg)
	}
	select {
	case <-n.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("Failed() did not report the log failure")
	}
	st := ping()
	if e := st.Err(); bus.ErrorType(e) != bus.ReasonUnavailable || !strings.Contains(e.Error(), "restart") {
		t.Fatalf("ping after the failure: %v, want unavailable saying to restart", e)
	}
	fault.armed.Store(false)
}

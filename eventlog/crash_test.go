package eventlog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestPowerLoss appends from several goroutines on a crashable in-memory
// filesystem, takes crash clones mid-stream (keeping a random part of what
// was not synced, as a real disk might), and checks on each clone that
// every append acknowledged before the clone is there, that streams are
// gapless, that each two-stream batch landed whole or not at all, and that
// Verify finds nothing damaged.
func TestPowerLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	var (
		acked [writers]atomic.Uint64 // per writer: last acknowledged n
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for n := uint64(1); !stop.Load(); n++ {
				// Each append writes agent/w<w> seq n and, in the same
				// batch, mirror/w<w> seq n.
				_, err := l.AppendMulti(context.Background(), []StreamAppend{
					{Stream: fmt.Sprintf("agent/w%d", w), Expected: ExactVersion(n - 1), Events: []bus.Signal{sig("t.x", fmt.Sprint(n))}},
					{Stream: fmt.Sprintf("mirror/w%d", w), Expected: ExactVersion(n - 1), Events: []bus.Signal{sig("t.x", fmt.Sprint(n))}},
				})
				if err != nil {
					t.Errorf("writer %d append %d: %v", w, n, err)
					return
				}
				acked[w].Store(n)
			}
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for crash := range 5 {
		testkit.Eventually(t, "more appends", func() bool { return acked[0].Load() > uint64(20*(crash+1)) })
		var floor [writers]uint64
		for w := range writers {
			floor[w] = acked[w].Load()
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(100), RNG: rand.New(rand.NewPCG(uint64(crash), 7))})
		checkAfterCrash(t, clone, floor[:])
	}
	stop.Store(true)
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func checkAfterCrash(t *testing.T, fs vfs.FS, floor []uint64) {
	t.Helper()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer l.Close()
	for w, min := range floor {
		var heads [2]uint64
		for i, stream := range []string{fmt.Sprintf("agent/w%d", w), fmt.Sprintf("mirror/w%d", w)} {
			if _, err := l.Stream(stream); errors.Is(err, ErrNotFound) {
				// Nothing of this writer survived: fine only if nothing of
				// it had been acknowledged (a slow writer under -race).
				continue
			}
			entries := collect(t, l.ReadStream(stream, ReadOptions{}))
			for j, e := range entries {
				if e.Seq != uint64(j+1) || e.Event.ID() != fmt.Sprint(j+1) {
					t.Fatalf("%s: entry %d is seq %d id %s (a gap or a half-written entry)", stream, j, e.Seq, e.Event.ID())
				}
			}
			heads[i] = uint64(len(entries))
			if info, _ := l.Stream(stream); info.Head != heads[i] {
				t.Fatalf("%s: metadata head %d, %d entries", stream, info.Head, heads[i])
			}
		}
		if heads[0] < min {
			t.Fatalf("writer %d: %d entries after the crash, %d were acknowledged", w, heads[0], min)
		}
		if heads[0] != heads[1] {
			t.Fatalf("writer %d: a batch landed in part: agent %d entries, mirror %d", w, heads[0], heads[1])
		}
	}
	report, err := l.Verify(context.Background(), nil)
	if err != nil || !report.OK() {
		t.Fatalf("verify after crash: %v %v", err, report.Damaged)
	}
}

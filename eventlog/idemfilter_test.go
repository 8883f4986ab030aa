package eventlog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"pgregory.net/rapid"
)

// TestIdemFilterHasNoFalseNegatives fills filters far past their capacity:
// a key that was added is always a "maybe", however full the filter.
func TestIdemFilterHasNoFalseNegatives(t *testing.T) {
	for _, c := range []struct {
		name     string
		keys     uint64
		maxBytes int64
		add      int
	}{
		{"one block, far over capacity", 0, filterBlockBytes, 5000},
		{"minimum size, at capacity", 0, 32 << 20, filterMinBytes * 8 / filterBitsPerKey},
		{"sized for its keys", 100_000, 32 << 20, 100_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newIdemFilter(c.keys, c.maxBytes)
			r := rand.New(rand.NewPCG(1, 2))
			added := make([]uint64, c.add)
			for i := range added {
				added[i] = r.Uint64()
				f.add(added[i])
			}
			for _, h := range added {
				if !f.mayContain(h) {
					t.Fatalf("hash %x was added but the filter says absent", h)
				}
			}
			if c.maxBytes > filterBlockBytes {
				// Below capacity the false-alarm rate stays small.
				fp := 0
				for range 100_000 {
					if f.mayContain(r.Uint64()) {
						fp++
					}
				}
				if fp > 1000 {
					t.Errorf("%d false alarms in 100,000 absent keys (%d bytes, %d keys)", fp, f.sizeBytes(), c.add)
				}
			}
		})
	}
}

// waitFilter starts the first filter build if no append has, and waits
// until no filter is being built, so that the next appends use the built
// one.
func waitFilter(t testing.TB, l *Log) {
	t.Helper()
	l.commitMu.Lock()
	l.startFirstFilter()
	l.commitMu.Unlock()
	testkit.Eventually(t, "the idempotency filter build", func() bool {
		l.commitMu.Lock()
		defer l.commitMu.Unlock()
		return l.building == nil
	})
}

// filterModes are the ways the filter can be: built and roomy, so tiny
// that it is always full (every key a false alarm), and off.
var filterModes = []struct {
	name  string
	bytes int64
}{
	{"default", 0},
	{"saturated", filterBlockBytes},
	{"off", -1},
}

// TestDuplicateAfterReopen: events appended before a close are recognised
// as duplicates after the reopen, whether the new filter is still being
// built or done, saturated, or off; nothing is written twice.
func TestDuplicateAfterReopen(t *testing.T) {
	for _, mode := range filterModes {
		for _, wait := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/wait=%v", mode.name, wait), func(t *testing.T) {
				fs := vfs.NewMem()
				opts := Options{FS: fs, IdempotencyFilterBytes: mode.bytes}
				l, err := Open("db", opts)
				if err != nil {
					t.Fatal(err)
				}
				first := mustAppend(t, l, "agent/a", sigs("t.x", "e", 50)...)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l, err = Open("db", opts)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				if wait {
					waitFilter(t, l)
				}
				again := mustAppend(t, l, "agent/a", sigs("t.x", "e", 50)...)
				for i, p := range again.Positions {
					want := first.Positions[i]
					want.Duplicate = true
					if p != want {
						t.Fatalf("event %d: position %+v, want %+v", i, p, want)
					}
				}
				if again.Version != 50 {
					t.Fatalf("version %d after re-sending, want 50", again.Version)
				}
				// A new event among old ones is written, once.
				mixed := mustAppend(t, l, "agent/a", sig("t.x", "e7"), sig("t.x", "new"), sig("t.x", "new"))
				if !mixed.Positions[0].Duplicate || mixed.Positions[1].Duplicate || mixed.Positions[1].Seq != 51 ||
					mixed.Positions[2] != (Position{Seq: 51, GlobalSeq: mixed.Positions[1].GlobalSeq, Duplicate: true}) {
					t.Fatalf("positions %+v", mixed.Positions)
				}
			})
		}
	}
}

// TestDuplicateAfterTruncateAndDelete: the filter keeps the keys of
// removed entries, so it answers "maybe" for them; the lookup then finds
// them gone and the event is appended again, as TruncateBefore documents.
// The entries still retained stay duplicates.
func TestDuplicateAfterTruncateAndDelete(t *testing.T) {
	for _, mode := range filterModes {
		t.Run(mode.name, func(t *testing.T) {
			l := openMem(t, Options{IdempotencyFilterBytes: mode.bytes})
			waitFilter(t, l)
			mustAppend(t, l, "agent/a", sigs("t.x", "e", 5)...)
			if _, err := l.TruncateBefore(context.Background(), "agent/a", 3); err != nil {
				t.Fatal(err)
			}
			res := mustAppend(t, l, "agent/a", sig("t.x", "e1"), sig("t.x", "e4"))
			if res.Positions[0].Duplicate || res.Positions[0].Seq != 6 {
				t.Fatalf("truncated e1 re-sent: %+v, want a new entry at 6", res.Positions[0])
			}
			if !res.Positions[1].Duplicate || res.Positions[1].Seq != 4 {
				t.Fatalf("retained e4 re-sent: %+v, want the duplicate at 4", res.Positions[1])
			}
			if _, err := l.DeleteStream(context.Background(), "agent/a"); err != nil {
				t.Fatal(err)
			}
			res = mustAppend(t, l, "agent/a", sig("t.x", "e4"), sig("t.x", "e1"))
			if res.Positions[0].Duplicate || res.Positions[0].Seq != 1 || res.Positions[1].Seq != 2 {
				t.Fatalf("after delete: %+v, want new entries at 1 and 2", res.Positions)
			}
			// The same ids in another stream are other events.
			res = mustAppend(t, l, "agent/b", sig("t.x", "e4"))
			if res.Positions[0].Duplicate {
				t.Fatalf("e4 in agent/b is a duplicate of agent/a's: %+v", res.Positions[0])
			}
		})
	}
}

// TestFilterGrowsWithoutMissingDuplicates appends past the capacity of
// the first filter, so that a larger one is built in the background while
// appends go on, then re-sends every event: all are duplicates.
func TestFilterGrowsWithoutMissingDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("appends 40,000 events")
	}
	l := openMem(t, Options{NoSync: true})
	waitFilter(t, l)
	first := l.filter.sizeBytes()
	const n, per = 40_000, 1000
	batch := func(i int) []bus.Signal { return sigs("t.x", fmt.Sprintf("b%d-", i), per) }
	for i := range n / per {
		mustAppend(t, l, fmt.Sprintf("agent/s%d", i%7), batch(i)...)
	}
	waitFilter(t, l)
	if got := l.filter.sizeBytes(); got <= first {
		t.Fatalf("filter is %d bytes after %d events, want more than the first %d", got, n, first)
	}
	for i := range n / per {
		res := mustAppend(t, l, fmt.Sprintf("agent/s%d", i%7), batch(i)...)
		for j, p := range res.Positions {
			if !p.Duplicate {
				t.Fatalf("batch %d event %d written again at %+v", i, j, p)
			}
		}
	}
}

// TestIdempotencyModel runs random appends of ids from a small set,
// truncations, deletions and reopens against a model of which ids each
// stream holds, with the filter roomy, saturated or off. An id the model
// holds must come back as a duplicate, and one it does not as new.
func TestIdempotencyModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		mode := rapid.SampledFrom(filterModes).Draw(rt, "filter")
		fs := vfs.NewMem()
		opts := Options{FS: fs, NoSync: true, IdempotencyFilterBytes: mode.bytes}
		l, err := Open("db", opts)
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		streams := []string{"agent/a", "agent/b"}
		type held struct{ seq uint64 }
		model := map[string]map[string]held{}
		heads := map[string]uint64{}
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for range steps {
			stream := rapid.SampledFrom(streams).Draw(rt, "stream")
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 7:
				ids := rapid.SliceOfN(rapid.IntRange(0, 12), 1, 4).Draw(rt, "ids")
				events := make([]bus.Signal, len(ids))
				for i, id := range ids {
					events[i] = sig("t.x", fmt.Sprint("id", id))
				}
				res, err := l.Append(context.Background(), stream, AnyVersion, events...)
				if err != nil {
					rt.Fatal(err)
				}
				if model[stream] == nil {
					model[stream] = map[string]held{}
				}
				for i, id := range ids {
					key := fmt.Sprint("id", id)
					h, dup := model[stream][key]
					p := res.Positions[i]
					if p.Duplicate != dup || (dup && p.Seq != h.seq) {
						rt.Fatalf("%s %s: position %+v, model holds=%v at %d", stream, key, p, dup, h.seq)
					}
					if !dup {
						heads[stream]++
						if p.Seq != heads[stream] {
							rt.Fatalf("%s %s: new at %d, want %d", stream, key, p.Seq, heads[stream])
						}
						model[stream][key] = held{seq: p.Seq}
					}
				}
			case op == 7:
				before := rapid.Uint64Range(1, heads[stream]+1).Draw(rt, "before")
				if _, err := l.TruncateBefore(context.Background(), stream, before); err != nil && heads[stream] > 0 {
					rt.Fatal(err)
				}
				for k, h := range model[stream] {
					if h.seq < before {
						delete(model[stream], k)
					}
				}
			case op == 8:
				if _, err := l.DeleteStream(context.Background(), stream); err != nil && heads[stream] > 0 {
					rt.Fatal(err)
				}
				delete(model, stream)
				heads[stream] = 0
			default:
				if err := l.Close(); err != nil {
					rt.Fatal(err)
				}
				if l, err = Open("db", opts); err != nil {
					rt.Fatal(err)
				}
			}
		}
	})
}

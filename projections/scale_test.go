package projections

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// fat is a per-stream projection whose states weigh about 1 KiB each, so
// that holding 100,000 of them would take 100 MB.
type fat struct{}

type fatState struct {
	Count uint64 `json:"count"`
	Pad   string `json:"pad"`
}

func (fat) Name() string    { return "fat" }
func (fat) Version() string { return "1" }
func (fat) Selector() Selector {
	return Selector{StreamPrefix: "t/", Types: "test.**", PerStream: true}
}
func (fat) Init() *fatState { return &fatState{} }
func (fat) Apply(s *fatState, e *Entry) *fatState {
	s.Count++
	s.Pad = strings.Repeat("x", 1024)
	return s
}

// TestPerKeyScale folds one entry into each of 100,000 keys with a cache of
// 500 states: every key ends up stored, the cache never holds more than its
// bound, and the heap stays far below what 100,000 states would need. Under
// the race detector, which slows Pebble's compactions some thirty times, it
// folds 20,000 keys.
func TestPerKeyScale(t *testing.T) {
	if testing.Short() {
		t.Skip("folds 100,000 keys")
	}
	const cacheStates = 500
	keys := 100_000
	if raceEnabled {
		keys = 20_000
	}
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	for chunk := 0; chunk < keys; chunk += 10_000 {
		parts := make([]eventlog.StreamAppend, 10_000)
		for i := range parts {
			k := chunk + i
			parts[i] = eventlog.StreamAppend{Stream: fmt.Sprintf("t/k%06d", k), Events: []bus.Signal{testSig("test.ev", fmt.Sprint(k))}}
		}
		if _, err := l.AppendMulti(context.Background(), parts); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewRunner(l, s, Options{CacheStates: cacheStates}, MustDefine[*fatState](fat{}))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	maxHeld := 0
	err = r.CatchUp(context.Background(), func(Progress) {
		p := r.byName["fat"]
		maxHeld = max(maxHeld, p.cache.len()+len(p.pending))
	})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	if maxHeld > 2*cacheStates {
		t.Errorf("held %d states in memory, bound is %d cached + %d pending", maxHeld, cacheStates, cacheStates)
	}
	if st := r.Status()[0]; st.Keys != uint64(keys) || st.Applied != uint64(keys) || st.Lag != 0 {
		t.Errorf("status %+v", st)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 40<<20 {
		t.Errorf("heap grew by %d MB folding %d keys with a cache of %d", grew>>20, keys, cacheStates)
	}
	for _, k := range []int{0, 1, keys / 2, keys - 1} {
		st, err := r.Get("fat", fmt.Sprintf("k%06d", k))
		if err != nil || !strings.HasPrefix(string(st.State), `{"count":1,`) {
			t.Errorf("key %d: %.40s %v", k, st.State, err)
		}
	}
	if n, err := r.Keys("fat", "", "", 0); err != nil || len(n) != keys {
		t.Errorf("Keys listed %d, %v", len(n), err)
	}
}

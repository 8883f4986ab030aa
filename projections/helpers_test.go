package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// tally is a per-stream test projection that records enough to detect an
// entry applied twice, skipped or out of order.
type tally struct{ version string }

type tallyState struct {
	Count uint64 `json:"count"`
	Sum   uint64 `json:"sum"`  // of global sequences folded
	Last  uint64 `json:"last"` // the last global sequence folded
	Bad   uint64 `json:"bad"`  // entries at or below Last: applied twice or out of order
}

func (t tally) Name() string { return "tally" }
func (t tally) Version() string {
	if t.version == "" {
		return "1"
	}
	return t.version
}
func (tally) Selector() Selector {
	return Selector{StreamPrefix: "t/", Types: "test.**", PerStream: true}
}
func (tally) Init() *tallyState { return &tallyState{} }
func (tally) Apply(s *tallyState, e *Entry) *tallyState {
	if e.GlobalSeq <= s.Last {
		s.Bad++
	}
	s.Count++
	s.Sum += e.GlobalSeq
	s.Last = e.GlobalSeq
	return s
}

// total is a single-state projection counting every test event.
type total struct{}

func (total) Name() string                              { return "total" }
func (total) Version() string                           { return "1" }
func (total) Selector() Selector                        { return Selector{Types: "test.**"} }
func (total) Init() *tallyState                         { return &tallyState{} }
func (total) Apply(s *tallyState, e *Entry) *tallyState { return tally{}.Apply(s, e) }

func testSig(typ, id string) bus.Signal {
	s, err := bus.NewSignal(typ, "test/source", map[string]string{"id": id})
	if err != nil {
		panic(err)
	}
	s.SetID(id)
	s.SetTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	return s
}

func openLog(t testing.TB, dir string) *eventlog.Log {
	t.Helper()
	l, err := openLogErr(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func openLogErr(dir string) (*eventlog.Log, error) {
	return eventlog.Open(filepath.Join(dir, "log"), eventlog.Options{NoSync: true})
}

func decodeTally(t testing.TB, b []byte) tallyState {
	t.Helper()
	var s tallyState
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("state %s: %v", b, err)
	}
	return s
}

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := OpenStore(filepath.Join(dir, "projections"), StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// appendRound appends one test event to each of n streams t/k0 … t/k<n-1>
// in one batch, with ids tagged by round.
func appendRound(t testing.TB, l *eventlog.Log, round, n int) {
	t.Helper()
	parts := make([]eventlog.StreamAppend, n)
	for k := range n {
		parts[k] = eventlog.StreamAppend{Stream: fmt.Sprintf("t/k%d", k), Events: []bus.Signal{testSig("test.ev", fmt.Sprintf("r%d-k%d", round, k))}}
	}
	if _, err := l.AppendMulti(context.Background(), parts); err != nil {
		t.Fatal(err)
	}
}

// expectTallies reads every stream t/* from the log and checks that the
// stored tally state of each equals a fold computed here.
func expectTallies(t testing.TB, r *Runner, l *eventlog.Log) {
	t.Helper()
	for _, info := range l.Streams("t/") {
		var want tallyState
		for e, err := range l.ReadStream(info.Stream, eventlog.ReadOptions{Types: "test.**"}) {
			if err != nil {
				t.Fatal(err)
			}
			want.Count++
			want.Sum += e.GlobalSeq
			want.Last = e.GlobalSeq
		}
		got := getTally(t, r, info.Stream[2:])
		if got != want {
			t.Fatalf("%s: state %+v, want %+v", info.Stream, got, want)
		}
	}
}

func getTally(t testing.TB, r *Runner, key string) tallyState {
	t.Helper()
	st, err := r.Get("tally", key)
	if err != nil {
		t.Fatal(err)
	}
	return decodeTally(t, st.State)
}

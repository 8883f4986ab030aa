package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/eventlogtest"
)

// BenchmarkRecover measures Recover on a log at rest — written once, its
// compactions waited out, then reopened for each run — of 1,000 counters
// that decided 100 signals each with snapshots off, so that every signal
// is folded again. It is the fold's own rate; `jido-bus bench` measures
// recovery right after writing the log. One op is one whole recovery
// (open, New, Recover; closing is not timed). Besides entries/s it
// reports the allocations and the process's CPU time per entry, which
// other work on the machine disturbs less than the rate.
func BenchmarkRecover(b *testing.B) {
	const agentCount, signals = 1000, 100
	dir := filepath.Join(b.TempDir(), "log")
	types := agents.NewRegistry()
	if err := builtin.Register(types); err != nil {
		b.Fatal(err)
	}
	entries := fillRecoveryLog(b, dir, types, agentCount, signals)
	eventlogtest.Settle(b, dir)
	var mallocs uint64
	var cpu time.Duration
	recoverOnce := func() {
		m0, cpu0 := mallocsNow(), processCPU()
		l, err := eventlog.Open(dir, eventlog.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rt, err := New(Config{Store: l, Types: types})
		if err != nil {
			b.Fatal(err)
		}
		n, err := rt.Recover(context.Background())
		if err != nil || n != agentCount {
			b.Fatalf("recovered %d agents: %v", n, err)
		}
		mallocs += mallocsNow() - m0
		cpu += processCPU() - cpu0
		b.StopTimer()
		defer b.StartTimer()
		if err := rt.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		recoverOnce()
	}
	folded := float64(entries) * float64(b.N)
	b.ReportMetric(folded/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(mallocs)/folded, "allocs/entry")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/folded, "cpu-ns/entry")
	}
}

// mallocsNow is how many heap objects the process has allocated so far.
func mallocsNow() uint64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.Mallocs
}

// fillRecoveryLog writes the log BenchmarkRecover reads and closes it
// once the directives' outcomes are recorded; it returns how many entries
// the agents' streams hold.
func fillRecoveryLog(b *testing.B, dir string, types *agents.Registry, agentCount, signals int) int {
	b.Helper()
	l, err := eventlog.Open(dir, eventlog.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := New(Config{Store: l, Types: types})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range agentCount {
		if _, err := rt.Start(ctx, StartRequest{Type: "counter", ID: fmt.Sprint("r", i), Options: Options{SnapshotEvery: MaxSnapshotEvery}}); err != nil {
			b.Fatal(err)
		}
	}
	for j := range signals {
		for i := range agentCount {
			sig, err := agents.NewSignal(builtin.CounterIncrement, json.RawMessage(`{"by":1}`))
			if err != nil {
				b.Fatal(err)
			}
			sig.SetID(fmt.Sprintf("s-%d-%d", i, j))
			sig.SetSource("bench/recover")
			if err := rt.Deliver(fmt.Sprint("r", i), sig, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := rt.Shutdown(context.Background()); err != nil { // waits for the queues and records the outcomes
		b.Fatal(err)
	}
	entries := 0
	for _, s := range l.Streams("agent/") {
		entries += int(s.Count)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return entries
}

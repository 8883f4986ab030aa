package eventlog

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/jido-bus/jido-bus/bus"
)

// benchEvent returns an event with about 200 bytes of JSON data.
func benchEvent(id string) bus.Signal {
	s := sig("bench.event", id)
	_ = bus.SetJSONData(&s, []byte(`{"payload":"`+strings.Repeat("x", 186)+`"}`))
	return s
}

// runAppenders runs b.N operations spread over n goroutines and reports
// entries per second.
func runAppenders(b *testing.B, n int, op func(worker int, i uint64)) {
	runAppendersPer(b, n, 1, op)
}

// runAppendersPer is runAppenders for operations that write perOp entries
// each: it reports appends (operations) and entries per second.
func runAppendersPer(b *testing.B, n, perOp int, op func(worker int, i uint64)) {
	var next atomic.Uint64
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	for w := range n {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > uint64(b.N) {
					return
				}
				op(w, i)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	secs := time.Since(start).Seconds()
	// CPU time of the whole process (Pebble's flushes and compactions
	// included) per operation: steadier than the rate on a shared machine,
	// whose disk latency varies from run to run.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	if perOp > 1 {
		b.ReportMetric(float64(b.N)/secs, "appends/s")
	}
	b.ReportMetric(float64(b.N*perOp)/secs, "entries/s")
}

// BenchmarkDurableAppend measures synced appends of ~200-byte events by 1, 8
// and 64 concurrent appenders, each to its own stream, against two
// baselines writing the same value bytes to raw Pebble with sync: one
// Apply(Sync) per append from each goroutine (Pebble's own group commit),
// and a single committer goroutine that gathers waiting appends into one
// batch (a hand-made group commit).
func BenchmarkDurableAppend(b *testing.B) {
	value := encodeEntry(nil, "agent/bench", 1, 1, time.Now(), ptr(benchEvent("v")))
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("eventlog/appenders=%d", n), func(b *testing.B) {
			l, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			// Events are made before the clock starts: making one (a ULID,
			// JSON) is the caller's cost, not the log's.
			events := make([]bus.Signal, b.N+1)
			for i := range events {
				events[i] = benchEvent(fmt.Sprint(i))
			}
			streams := make([]string, n)
			for w := range streams {
				streams[w] = fmt.Sprintf("agent/w%d", w)
			}
			b.SetBytes(int64(len(value)))
			runAppenders(b, n, func(w int, i uint64) {
				if _, err := l.Append(context.Background(), streams[w], AnyVersion, events[i]); err != nil {
					b.Error(err)
				}
			})
			reportWrites(b, l, b.N)
		})
		b.Run(fmt.Sprintf("pebble-raw/appenders=%d", n), func(b *testing.B) {
			db, err := pebble.Open(b.TempDir(), &pebble.Options{Logger: pebbleLogger{discardLogger()}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			b.SetBytes(int64(len(value)))
			runAppenders(b, n, func(_ int, i uint64) {
				batch := db.NewBatch()
				_ = batch.Set(globalKey(i), value, nil)
				if err := db.Apply(batch, pebble.Sync); err != nil {
					b.Error(err)
				}
				batch.Close()
			})
		})
		b.Run(fmt.Sprintf("pebble-one-committer/appenders=%d", n), func(b *testing.B) {
			db, err := pebble.Open(b.TempDir(), &pebble.Options{Logger: pebbleLogger{discardLogger()}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c := newCommitter(db)
			defer c.stop()
			b.SetBytes(int64(len(value)))
			runAppenders(b, n, func(_ int, i uint64) {
				if err := c.set(globalKey(i), value); err != nil {
					b.Error(err)
				}
			})
		})
	}
}

// cmdEvent returns a small runtime record like the jido.agent.cmd entry
// the agent runtime appends after each signal it accepts.
func cmdEvent(signalID string, version uint64) bus.Signal {
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType("jido.agent.cmd")
	s.SetID("cmd:test/source#" + signalID)
	s.SetSource("jido-bus:runtime")
	s.SetTime(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	_ = bus.SetJSONData(&s, []byte(fmt.Sprintf(`{"signal":%q,"version":%d,"directives":[]}`, signalID, version)))
	return s
}

// BenchmarkDurableAppendPair measures what the agent runtime does per
// accepted signal: one synced append of two events (the ~200-byte signal
// and a small jido.agent.cmd record) to the appender's own stream, at the
// exact version it expects. Each appender is one agent. The baseline
// writes the same two values to raw Pebble in one synced batch per append.
// appends/s is signals per second.
func BenchmarkDurableAppendPair(b *testing.B) {
	value := encodeEntry(nil, "agent/bench", 1, 1, time.Now(), ptr(benchEvent("v")))
	cmd := encodeEntry(nil, "agent/bench", 2, 2, time.Now(), ptr(cmdEvent("v", 1)))
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprintf("eventlog/appenders=%d", n), func(b *testing.B) {
			l, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			events := make([][2]bus.Signal, b.N+1)
			for i := range events {
				id := fmt.Sprint(i)
				events[i] = [2]bus.Signal{benchEvent(id), cmdEvent(id, 0)}
			}
			streams := make([]string, n)
			heads := make([]uint64, n) // each written only by its appender
			for w := range streams {
				streams[w] = fmt.Sprintf("agent/w%d", w)
			}
			b.SetBytes(int64(len(value) + len(cmd)))
			runAppendersPer(b, n, 2, func(w int, i uint64) {
				res, err := l.Append(context.Background(), streams[w], ExactVersion(heads[w]), events[i][:]...)
				if err != nil {
					b.Error(err)
					return
				}
				heads[w] = res.Version
			})
			reportWrites(b, l, 2*b.N)
		})
		b.Run(fmt.Sprintf("pebble-raw/appenders=%d", n), func(b *testing.B) {
			db, err := pebble.Open(b.TempDir(), &pebble.Options{Logger: pebbleLogger{discardLogger()}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			b.SetBytes(int64(len(value) + len(cmd)))
			runAppendersPer(b, n, 2, func(_ int, i uint64) {
				batch := db.NewBatch()
				_ = batch.Set(globalKey(2*i), value, nil)
				_ = batch.Set(globalKey(2*i+1), cmd, nil)
				if err := db.Apply(batch, pebble.Sync); err != nil {
					b.Error(err)
				}
				batch.Close()
			})
		})
	}
}

// committer is the alternative design measured against Pebble's group
// commit: one goroutine takes every waiting write, applies them as one
// synced batch, and answers them all.
type committer struct {
	db   *pebble.DB
	reqs chan commitReq
	done sync.WaitGroup
}

type commitReq struct {
	key, value []byte
	reply      chan error
}

func newCommitter(db *pebble.DB) *committer {
	c := &committer{db: db, reqs: make(chan commitReq, 1024)}
	c.done.Go(c.loop)
	return c
}

func (c *committer) set(key, value []byte) error {
	reply := make(chan error, 1)
	c.reqs <- commitReq{key, value, reply}
	return <-reply
}

func (c *committer) stop() { close(c.reqs); c.done.Wait() }

func (c *committer) loop() {
	for first := range c.reqs {
		group := []commitReq{first}
	gather:
		for {
			select {
			case r, ok := <-c.reqs:
				if !ok {
					break gather
				}
				group = append(group, r)
			default:
				break gather
			}
		}
		b := c.db.NewBatch()
		for _, r := range group {
			_ = b.Set(r.key, r.value, nil)
		}
		err := c.db.Apply(b, pebble.Sync)
		b.Close()
		for _, r := range group {
			r.reply <- err
		}
	}
}

// replayFixture is a log holding one stream of n entries (built once per
// size and process, since 1M entries take a while to write).
type replayFixture struct {
	dir string
	n   int
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[int]*replayFixture{}
)

func fixture(b *testing.B, n int) *replayFixture {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f, ok := fixtures[n]; ok {
		return f
	}
	dir, err := os.MkdirTemp("", "eventlog-bench-")
	if err != nil {
		b.Fatal(err)
	}
	l, err := Open(dir, Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	const chunk = 5000
	events := make([]bus.Signal, 0, chunk)
	for i := 0; i < n; i++ {
		events = append(events, benchEvent(fmt.Sprint(i)))
		if len(events) == chunk || i == n-1 {
			if _, err := l.Append(context.Background(), "agent/replay", AnyVersion, events...); err != nil {
				b.Fatal(err)
			}
			events = events[:0]
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	f := &replayFixture{dir: dir, n: n}
	fixtures[n] = f
	return f
}

// removeFixtures deletes the replay fixtures; TestMain calls it.
func removeFixtures() {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	for _, f := range fixtures {
		os.RemoveAll(f.dir)
	}
}

// BenchmarkReplay reads a whole stream (and the global log) of n entries,
// decoding every event. One op is one full replay. "skipped" reads the
// global log with a type filter that matches none of them, as a
// projection of conversations does over agents' entries: every checksum
// verified, nothing decoded.
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		for _, mode := range []string{"stream", "global", "skipped"} {
			global, skipped := mode != "stream", mode == "skipped"
			b.Run(fmt.Sprintf("%s/entries=%d", mode, n), func(b *testing.B) {
				f := fixture(b, n)
				l, err := Open(f.dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					it := l.ReadStream("agent/replay", ReadOptions{})
					switch {
					case skipped:
						it = l.ReadAll(ReadOptions{Types: "conversation.**"})
					case global:
						it = l.ReadAll(ReadOptions{})
					}
					count := 0
					for e, err := range it {
						if err != nil {
							b.Fatal(err)
						}
						if e.Event.ID() == "" {
							b.Fatal("empty event")
						}
						count++
					}
					if want := f.n; skipped && count != 0 || !skipped && count != want {
						b.Fatalf("replayed %d of %d (filter %v)", count, want, skipped)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(f.n*b.N)/time.Since(start).Seconds(), "entries/s")
			})
		}
	}
}

// BenchmarkReadMemory reports how far the heap grows while an iterator and
// a subscription walk a 1M-entry stream: it must stay flat (a few MB of
// buffers and caches), not grow with the stream.
func BenchmarkReadMemory(b *testing.B) {
	f := fixture(b, 1_000_000)
	walk := func(b *testing.B, next func() (Entry, error, bool)) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, peak := ms.HeapInuse, ms.HeapInuse
		for i := 1; i <= f.n; i++ {
			if _, err, ok := next(); err != nil || !ok {
				b.Fatalf("entry %d: %v", i, err)
			}
			if i%100_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		b.ReportMetric(float64(peak-base)/(1<<20), "heap-growth-MB")
	}
	b.Run("iterator", func(b *testing.B) {
		l, err := Open(f.dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		for range b.N {
			next, stop := iter.Pull2(l.ReadStream("agent/replay", ReadOptions{}))
			walk(b, next)
			stop()
		}
	})
	b.Run("subscription", func(b *testing.B) {
		l, err := Open(f.dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		for range b.N {
			sub, err := l.Subscribe(SubscribeOptions{Stream: "agent/replay", From: 1})
			if err != nil {
				b.Fatal(err)
			}
			walk(b, func() (Entry, error, bool) {
				e, err := sub.Next(context.Background())
				return e, err, true
			})
			sub.Close()
		}
	})
}

// processCPU returns the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

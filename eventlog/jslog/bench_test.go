package jslog

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// BenchmarkAppend measures single-event appends through the 3-server R3
// cluster (sync_interval: always), beside raw JetStream R3 publishes of the
// same bytes into a stream of the same settings, in the same run: one
// writer at a time (latency), and 64 writers on streams of their own
// (throughput). It reports appends/s and the p50 and p99 latency.
//
//	go test -run '^$' -bench BenchmarkAppend -benchtime 3000x ./eventlog/jslog/
func BenchmarkAppend(b *testing.B) {
	l, nc := openLog(b, Options{Partitions: 4})
	js, _ := jetstream.New(nc)
	raw := l.partitionConfig(0)
	raw.Name, raw.Subjects, raw.Metadata = l.upper+"_RAW", []string{l.opts.Prefix + ".raw.>"}, nil
	if _, err := js.CreateStream(b.Context(), raw); err != nil {
		b.Fatal(err)
	}
	body, err := encodeEvents([]bus.Signal{sig("bench.event", "x")})
	if err != nil {
		b.Fatal(err)
	}
	var streams atomic.Int64
	jslogWriter := func() func(i int) error {
		stream := fmt.Sprintf("agent/b%d", streams.Add(1))
		return func(i int) error {
			_, err := l.Append(context.Background(), stream, eventlog.ExactVersion(uint64(i)), sig("bench.event", strconv.Itoa(i)))
			return err
		}
	}
	rawWriter := func() func(i int) error {
		subject := fmt.Sprintf("%s.raw.b%d", l.opts.Prefix, streams.Add(1))
		return func(i int) error {
			m := nats.NewMsg(subject)
			m.Data = body
			m.Header.Set(hdrVersion, strconv.Itoa(i+1))
			m.Header.Set(hdrEvents, "1")
			_, err := js.PublishMsg(context.Background(), m)
			return err
		}
	}
	for _, w := range []struct {
		name string
		make func() func(int) error
	}{{"jslog", jslogWriter}, {"raw", rawWriter}} {
		b.Run(w.name+"/serial", func(b *testing.B) { runWriters(b, 1, w.make) })
		b.Run(w.name+"/64-writers", func(b *testing.B) { runWriters(b, 64, w.make) })
	}
}

// runWriters splits b.N appends over n writers, each with its own stream,
// and reports the rate and the latency percentiles.
func runWriters(b *testing.B, n int, mk func() func(int) error) {
	writers := make([]func(int) error, n)
	for i := range writers {
		writers[i] = mk()
	}
	hist := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
	var mu sync.Mutex
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w, write := range writers {
		count := b.N / n
		if w < b.N%n {
			count++
		}
		wg.Go(func() {
			local := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
			for i := range count {
				t0 := time.Now()
				if err := write(i); err != nil {
					b.Error(err)
					return
				}
				local.RecordValue(time.Since(t0).Microseconds())
			}
			mu.Lock()
			hist.Merge(local)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(hist.ValueAtQuantile(50)), "p50-µs")
	b.ReportMetric(float64(hist.ValueAtQuantile(99)), "p99-µs")
}

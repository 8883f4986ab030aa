package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// Metric names of the call scenario: "call p50" …, "raw NATS req p50" …
// and "raw Pebble sync p50" ….
const (
	MetricCallPrefix    = "call "
	MetricRawReqPrefix  = "raw NATS req "
	MetricRawSyncPrefix = "raw Pebble sync "
	MetricCallRate      = "call rate"
	MetricCallP99       = MetricCallPrefix + "p99"
	baselineRawReq      = "raw NATS req"
	baselineRawSync     = "raw Pebble sync"
	callAgents          = 100
	callWarmup          = 100
	callTimeout         = 5 * time.Second
	echoSubject         = "bench.echo"
	histogramLowest     = 1             // µs
	histogramHighest    = 60 * 1000_000 // µs
	histogramSigFigures = 3
)

// percentiles reported by the call scenario.
var percentiles = []struct {
	name string
	q    float64
}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}}

// okReply is how every successful reply of the node starts.
var okReply = []byte(`{"ok":true`)

func runCall(ctx context.Context, env *Env) ([]Metric, error) {
	cfg := env.Config
	n, err := startNode(ctx, filepath.Join(env.Dir, "node"), nil, false)
	if err != nil {
		return nil, err
	}
	defer shutdown(n)
	ids := agentIDs("c", min(callAgents, cfg.Agents))
	if err := startCounters(ctx, n.Runtime(), ids, runtime.Options{}); err != nil {
		return nil, err
	}
	msgs, err := newMessages(cfg.MsgSize, "bench/call", bus.NewID())
	if err != nil {
		return nil, err
	}
	clients, err := connectClients(n.URL(), 1, "requester")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	nc := clients[0]

	var subjects bus.Subjects
	toAgent := func(i int) string { return subjects.Agent(ids[i%len(ids)], builtin.CounterIncrement) }
	calls, err := latencies(ctx, env, MetricCallPrefix+"latency", nc, msgs, toAgent)
	if err != nil {
		return nil, fmt.Errorf("calls: %w", err)
	}
	callers, err := connectClients(n.URL(), cfg.Callers, "caller")
	if err != nil {
		return nil, err
	}
	defer closeAll(callers)
	concCalls, err := concurrentLatencies(ctx, env, MetricCallConcPrefix+"latency", callers, msgs, toAgent)
	if err != nil {
		return nil, fmt.Errorf("calls by %d callers: %w", cfg.Callers, err)
	}

	// The baseline: the same requests to a responder on its own
	// connection that answers at once with a reply of the same shape.
	responders, err := connectClients(n.URL(), 1, "responder")
	if err != nil {
		return nil, err
	}
	defer closeAll(responders)
	reply := []byte(`{"ok":true,"state":{"count":1},"version":1}`)
	if _, err := responders[0].Subscribe(echoSubject+".>", func(m *nats.Msg) { _ = m.Respond(reply) }); err != nil {
		return nil, fmt.Errorf("subscribe the responder: %w", err)
	}
	if err := responders[0].Flush(); err != nil {
		return nil, fmt.Errorf("flush the responder: %w", err)
	}
	toEcho := func(i int) string { return echoSubject + "." + ids[i%len(ids)] }
	raw, err := latencies(ctx, env, MetricRawReqPrefix+"latency", nc, msgs, toEcho)
	if err != nil {
		return nil, fmt.Errorf("raw NATS request/reply: %w", err)
	}
	concRaw, err := concurrentLatencies(ctx, env, MetricRawReqConcPrefix+"latency", callers, msgs, toEcho)
	if err != nil {
		return nil, fmt.Errorf("raw NATS request/reply by %d callers: %w", cfg.Callers, err)
	}

	// The other floor: a durable call waits for an fsync, so the same
	// number of synced commits of a call's two entries to raw Pebble.
	disk, err := rawSyncLatencies(ctx, env, filepath.Join(env.Dir, "raw-pebble-sync"), msgs.wire())
	if err != nil {
		return nil, fmt.Errorf("raw Pebble synced commits: %w", err)
	}

	var out []Metric
	out = append(out, callPercentiles(MetricCallPrefix, calls, baselineRawReq, raw, disk)...)
	rate := Metric{Name: MetricCallRate, Value: calls.rate(), Unit: "calls/s", Count: calls.h.TotalCount(),
		Note: joinNotes(fmt.Sprintf("one caller, %d counters", len(ids)), calls.note(cfg.Calls))}
	rate.compare(baselineRawReq, raw.rate())
	out = append(out, rate)
	out = append(out, callPercentiles(MetricCallConcPrefix, concCalls, baselineRawReqConc, concRaw, disk)...)
	concRate := Metric{Name: MetricCallConcPrefix + "rate", Value: concCalls.rate(), Unit: "calls/s", Count: concCalls.h.TotalCount(),
		Note: joinNotes(fmt.Sprintf("%d callers at once, each on its own connection", cfg.Callers), concCalls.note(cfg.Calls))}
	concRate.compare(baselineRawReqConc, concRaw.rate())
	out = append(out, concRate)
	for _, p := range percentiles {
		out = append(out, Metric{Name: MetricRawReqConcPrefix + p.name, Value: ms(concRaw.h.ValueAtQuantile(p.q)), Unit: "ms", Count: concRaw.h.TotalCount()})
	}
	for _, p := range percentiles {
		out = append(out, Metric{Name: MetricRawReqPrefix + p.name, Value: ms(raw.h.ValueAtQuantile(p.q)), Unit: "ms", Count: raw.h.TotalCount()})
	}
	out = append(out, Metric{Name: MetricRawReqPrefix + "rate", Value: raw.rate(), Unit: "reqs/s", Count: raw.h.TotalCount(), Note: raw.note(cfg.Calls)})
	for _, p := range percentiles {
		out = append(out, Metric{Name: MetricRawSyncPrefix + p.name, Value: ms(disk.h.ValueAtQuantile(p.q)), Unit: "ms", Count: disk.h.TotalCount()})
	}
	out = append(out, Metric{Name: MetricRawSyncPrefix + "rate", Value: disk.rate(), Unit: "commits/s", Count: disk.h.TotalCount(),
		Note: joinNotes(fmt.Sprintf("one at a time, two %d B values per synced batch", len(msgs.wire())), disk.note(cfg.Calls))})
	return out, nil
}

type latencyRun struct {
	h       *hdrhistogram.Histogram
	elapsed time.Duration
	capped  bool
}

func (r latencyRun) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.h.TotalCount()) / r.elapsed.Seconds()
}

func (r latencyRun) note(total int) string {
	if !r.capped {
		return ""
	}
	return fmt.Sprintf("stopped by --duration after %d of %d", r.h.TotalCount(), total)
}

// latencies makes cfg.Calls requests one after the other (after a few
// unrecorded ones to warm up) and records each round trip in µs.
func latencies(ctx context.Context, env *Env, step string, nc *nats.Conn, msgs *messages, subject func(int) string) (latencyRun, error) {
	return timeEach(ctx, env, step, func(ctx context.Context, i int, warmUp bool) error {
		version := 0
		if warmUp {
			version = -1
		}
		msg := msgs.msg(subject(i), version, i)
		if err := request(ctx, nc, msg); err != nil {
			return fmt.Errorf("request on %s: %w", msg.Subject, err)
		}
		return nil
	})
}

// timeEach runs op cfg.Calls times one after the other, after a few
// unrecorded warm-up runs, and records each run in µs. A run cut off by
// --duration ends the measurement with what it finished.
func timeEach(ctx context.Context, env *Env, step string, op func(ctx context.Context, i int, warmUp bool) error) (latencyRun, error) {
	cfg := env.Config
	for i := range min(callWarmup, cfg.Calls) {
		if err := op(ctx, i, true); err != nil {
			return latencyRun{}, fmt.Errorf("warm-up %d: %w", i, err)
		}
	}
	h := hdrhistogram.New(histogramLowest, histogramHighest, histogramSigFigures)
	var done atomic.Int64
	stop := env.step(step, int64(cfg.Calls), done.Load)
	defer stop()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start := time.Now()
	for i := range cfg.Calls {
		t0 := time.Now()
		err := ctx.Err()
		if err == nil {
			err = op(ctx, i, false)
		}
		if err != nil && ctx.Err() != nil && parent.Err() == nil {
			return latencyRun{h: h, elapsed: time.Since(start), capped: true}, nil
		}
		if err != nil {
			return latencyRun{}, fmt.Errorf("%d: %w", i, err)
		}
		if err := h.RecordValue(time.Since(t0).Microseconds()); err != nil {
			return latencyRun{}, fmt.Errorf("record a latency: %w", err)
		}
		done.Add(1)
	}
	return latencyRun{h: h, elapsed: time.Since(start)}, nil
}

// request sends msg and checks that the reply says ok.
func request(ctx context.Context, nc *nats.Conn, msg *nats.Msg) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	reply, err := nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("%w: nobody serves %s", err, msg.Subject)
		}
		return err
	}
	if !bytes.HasPrefix(reply.Data, okReply) {
		return fmt.Errorf("refused: %.200s", reply.Data)
	}
	return nil
}

func ms(us int64) float64 { return float64(us) / 1000 }

// callPercentiles are the percentiles of calls, named prefix + p50 …,
// each beside the transport's (named transportName) and the disk's of the
// same run, and the p99 beside the goal too.
func callPercentiles(prefix string, calls latencyRun, transportName string, transport, disk latencyRun) []Metric {
	out := make([]Metric, 0, len(percentiles))
	for _, p := range percentiles {
		m := Metric{Name: prefix + p.name, Value: ms(calls.h.ValueAtQuantile(p.q)), Unit: "ms", Count: calls.h.TotalCount()}
		m.compare(transportName, ms(transport.h.ValueAtQuantile(p.q)))
		m.compare(baselineRawSync, ms(disk.h.ValueAtQuantile(p.q)))
		if p.name == "p99" {
			m.compare(baselineCallGoal, callGoal(transport, disk))
		}
		out = append(out, m)
	}
	return out
}

// callGoal is the call p99 issue 24 aims at, in ms: the transport's p99
// (transport, as many callers as the calls) plus the disk's plus 0.1 ms.
func callGoal(transport, disk latencyRun) float64 {
	return ms(transport.h.ValueAtQuantile(99)) + ms(disk.h.ValueAtQuantile(99)) + callGoalSlackMS
}

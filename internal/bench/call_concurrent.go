package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nats-io/nats.go"
	"golang.org/x/sync/errgroup"
)

// Metric names of the call scenario's concurrent run: "call concurrent
// p50" … and "raw NATS req concurrent p50" ….
const (
	MetricCallConcPrefix   = "call concurrent "
	MetricCallConcP99      = MetricCallConcPrefix + "p99"
	MetricRawReqConcPrefix = "raw NATS req concurrent "
	baselineRawReqConc     = "raw NATS req concurrent"
	// baselineCallGoal is issue 24's call latency goal: the transport's
	// p99 plus the disk's plus 0.1 ms, each measured in the same run (the
	// transport with as many callers as the calls).
	baselineCallGoal = "raw NATS req p99 + raw Pebble sync p99 + 0.1 ms"
	callGoalSlackMS  = 0.1
	// concurrentWarmup is each concurrent caller's unrecorded requests.
	concurrentWarmup = 10
)

// concurrentLatencies makes cfg.Calls requests from len(conns) callers at
// once, each on its own connection, caller c making requests c, c+C,
// c+2C …, and records each round trip in µs. Caller c's signals are those
// of publisher c+1 (the one-caller run's are publisher 0's), and its
// warm-up ones publisher -(c+2)'s, so no id repeats one the node has
// committed: a repeat would be answered as a duplicate, without a commit.
func concurrentLatencies(ctx context.Context, env *Env, step string, conns []*nats.Conn, msgs *messages, subject func(int) string) (latencyRun, error) {
	cfg := env.Config
	callers := len(conns)
	for c, nc := range conns {
		for i := range concurrentWarmup {
			if err := request(ctx, nc, msgs.msg(subject(c+i*callers), -(c+2), i)); err != nil {
				return latencyRun{}, fmt.Errorf("warm-up of caller %d: %w", c, err)
			}
		}
	}
	hs := make([]*hdrhistogram.Histogram, callers)
	var done atomic.Int64
	stop := env.step(step, int64(cfg.Calls), done.Load)
	defer stop()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var capped atomic.Bool
	var g errgroup.Group
	start := time.Now()
	for c, nc := range conns {
		h := hdrhistogram.New(histogramLowest, histogramHighest, histogramSigFigures)
		hs[c] = h
		g.Go(func() error {
			for i := c; i < cfg.Calls; i += callers {
				t0 := time.Now()
				err := ctx.Err()
				if err == nil {
					err = request(ctx, nc, msgs.msg(subject(i), c+1, i))
				}
				if err != nil && ctx.Err() != nil && parent.Err() == nil {
					capped.Store(true)
					return nil
				}
				if err != nil {
					return fmt.Errorf("caller %d, call %d: %w", c, i, err)
				}
				if err := h.RecordValue(time.Since(t0).Microseconds()); err != nil {
					return fmt.Errorf("record a latency: %w", err)
				}
				done.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return latencyRun{}, err
	}
	elapsed := time.Since(start)
	all := hdrhistogram.New(histogramLowest, histogramHighest, histogramSigFigures)
	for _, h := range hs {
		all.Merge(h)
	}
	return latencyRun{h: all, elapsed: elapsed, capped: capped.Load()}, nil
}

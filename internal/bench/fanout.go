package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// Metric names of the fanout scenario.
const (
	MetricFanout        = "broadcast delivered"
	MetricFanoutLatency = "broadcast to all committed"
	baselineCast        = "durable cast"
	fanoutRounds        = 5
)

func runFanout(ctx context.Context, env *Env) ([]Metric, error) {
	cfg := env.Config
	commits := &commitCounter{}
	n, err := startNode(ctx, filepath.Join(env.Dir, "node"), commits, false)
	if err != nil {
		return nil, err
	}
	defer shutdown(n)
	ids := agentIDs("f", cfg.FanoutAgents)
	stop := env.step("start counters", int64(len(ids)), func() int64 { return int64(len(n.Runtime().List())) })
	err = startCounters(ctx, n.Runtime(), ids, runtime.Options{})
	stop()
	if err != nil {
		return nil, err
	}
	msgs, err := newMessages(cfg.MsgSize, "bench/fanout", bus.NewID())
	if err != nil {
		return nil, err
	}
	clients, err := connectClients(n.URL(), 1, "broadcaster")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)

	var subjects bus.Subjects
	subject := subjects.Signal(builtin.CounterIncrement)
	k := int64(len(ids))
	total := k * fanoutRounds
	stop = env.step(MetricFanout, total, commits.n.Load)
	defer stop()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var times []time.Duration
	var elapsed time.Duration
	capped := false
	for r := range fanoutRounds {
		before := commits.n.Load()
		start := time.Now()
		if err := clients[0].PublishMsg(msgs.msg(subject, 0, r)); err != nil {
			return nil, fmt.Errorf("publish broadcast %d on %s: %w", r, subject, err)
		}
		if err := clients[0].Flush(); err != nil {
			return nil, fmt.Errorf("flush broadcast %d: %w", r, err)
		}
		if _, capped = waitFor(ctx, commits.n.Load, before+k); capped {
			elapsed += time.Since(start)
			break
		}
		d := time.Since(start)
		times = append(times, d)
		elapsed += d
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	delivered := commits.n.Load()
	if delivered == 0 {
		return nil, fmt.Errorf("no counter committed the broadcast on %s within %s; see the dead letters with jido-bus log --data-dir %s", subject, cfg.Duration, filepath.Join(env.Dir, "node"))
	}
	rate := Metric{Name: MetricFanout, Value: float64(delivered) / elapsed.Seconds(), Unit: "signals/s", Count: delivered,
		Note: fmt.Sprintf("%d broadcasts to %d counters", len(times), k)}
	if capped {
		rate.Note = joinNotes(rate.Note, fmt.Sprintf("stopped by --duration after %d of %d", delivered, total))
	}
	if m, ok := env.Earlier("cast", MetricCast); ok {
		rate.compare(baselineCast, m.Value)
	}
	out := []Metric{rate}
	if len(times) > 0 {
		slices.Sort(times)
		out = append(out, Metric{Name: MetricFanoutLatency, Value: float64(times[len(times)/2].Microseconds()) / 1000, Unit: "ms", Count: int64(len(times)),
			Note: fmt.Sprintf("median of %d broadcasts, from the publish until all %d committed", len(times), k)})
	}
	return out, nil
}

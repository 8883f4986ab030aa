package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// Metric names of the replay scenario.
const (
	MetricRecovery   = "recovery"
	MetricNodeStart  = "node start"
	MetricReadOnly   = "read streams"
	baselineReadOnly = "read without folding"
	// MetricRecoveryCPU and MetricReadOnlyCPU are the CPU time per entry
	// of recovery and of the read: less disturbed than entries/s by what
	// else runs on the machine. Recovery restores as many agents at once
	// as there are CPUs; the read is one loop.
	MetricRecoveryCPU   = "recovery CPU"
	MetricReadOnlyCPU   = "read streams CPU"
	baselineReadOnlyCPU = "read CPU"
)

func runReplay(ctx context.Context, env *Env) ([]Metric, error) {
	cfg := env.Config
	dir := filepath.Join(env.Dir, "node")
	ids := agentIDs("r", cfg.Agents)
	if err := fillForReplay(ctx, env, dir, ids); err != nil {
		return nil, fmt.Errorf("fill the log: %w", err)
	}

	// Open the log once untimed: Pebble replays and flushes the WAL the
	// fill left, so what is timed is reading and folding, as on any start
	// after the first. (Closing waits for the compactions that starts: the
	// log is at rest when recovery opens it, no compaction debt left.)
	l, err := eventlog.Open(node.LogDir(dir), eventlog.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("open the filled log: %w", err)
	}
	if err := l.Close(); err != nil {
		return nil, fmt.Errorf("close the filled log: %w", err)
	}
	recovery, recoveryCPU, entries, err := timeRecovery(ctx, env, node.LogDir(dir), len(ids))
	if err != nil {
		return nil, err
	}
	read, readCPU, readEntries, err := timeRead(ctx, env, node.LogDir(dir))
	if err != nil {
		return nil, err
	}
	if readEntries < entries {
		return nil, fmt.Errorf("recovery counted %d entries in the agents' streams but reading them gave only %d", entries, readEntries)
	}
	stop := env.step(MetricNodeStart, 1, func() int64 { return 0 })
	t0 := time.Now()
	n, err := node.Start(ctx, node.Config{DataDir: dir, NATS: node.NATSConfig{DontListen: true}})
	startTime := time.Since(t0)
	stop()
	if err != nil {
		return nil, fmt.Errorf("restart the node on %s: %w", dir, err)
	}
	recovered := n.Recovered()
	if err := shutdown(n); err != nil {
		return nil, fmt.Errorf("close the restarted node: %w", err)
	}
	if recovered != len(ids) {
		return nil, fmt.Errorf("node.Start recovered %d agents, want %d", recovered, len(ids))
	}

	perAgent := float64(entries) / float64(len(ids))
	rec := Metric{Name: MetricRecovery, Value: float64(entries) / recovery.Seconds(), Unit: "entries/s", Count: entries,
		Note: fmt.Sprintf("%d agents, %.0f entries each, in %s (eventlog.Open + runtime.New + Recover, snapshots off)", len(ids), perAgent, recovery.Round(time.Millisecond))}
	readM := Metric{Name: MetricReadOnly, Value: float64(readEntries) / read.Seconds(), Unit: "entries/s", Count: readEntries,
		Note: "ReadStream of every agent stream, no folding"}
	rec.compare(baselineReadOnly, readM.Value)
	startM := Metric{Name: MetricNodeStart, Value: float64(entries) / startTime.Seconds(), Unit: "entries/s", Count: entries,
		Note: fmt.Sprintf("whole node.Start (NATS, log, recovery, projections) in %s", startTime.Round(time.Millisecond))}
	startM.compare(baselineReadOnly, readM.Value)
	metrics := []Metric{rec, startM, readM}
	if recoveryCPU > 0 && readCPU > 0 {
		const cpuNote = "user and system CPU of the whole process per entry"
		recCPU := Metric{Name: MetricRecoveryCPU, Value: float64(recoveryCPU.Nanoseconds()) / 1e3 / float64(entries), Unit: "µs CPU/entry", Count: entries, Note: cpuNote}
		readCPUM := Metric{Name: MetricReadOnlyCPU, Value: float64(readCPU.Nanoseconds()) / 1e3 / float64(readEntries), Unit: "µs CPU/entry", Count: readEntries, Note: cpuNote}
		recCPU.compare(baselineReadOnlyCPU, readCPUM.Value)
		metrics = append(metrics, recCPU, readCPUM)
	}
	return metrics, nil
}

// cpuSince is the process CPU time used since cpu0 (from processCPU,
// ok0 whether it could be read); zero when it cannot be told.
func cpuSince(cpu0 time.Duration, ok0 bool) time.Duration {
	cpu1, ok := processCPU()
	if !ok || !ok0 {
		return 0
	}
	return cpu1 - cpu0
}

// fillForReplay writes cfg.Msgs counter signals over the agents through the
// runtime of a node (not synced: the fill is not what is measured), with
// snapshots off so that recovery has to fold every entry.
func fillForReplay(ctx context.Context, env *Env, dir string, ids []string) error {
	cfg := env.Config
	n, err := startNode(ctx, dir, nil, true)
	if err != nil {
		return err
	}
	defer shutdown(n)
	rt := n.Runtime()
	if err := startCounters(ctx, rt, ids, runtime.Options{SnapshotEvery: runtime.MaxSnapshotEvery}); err != nil {
		return err
	}
	data := json.RawMessage(counterData(cfg.MsgSize))
	credits := make(chan struct{}, cfg.Window)
	var done, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	reply := func(_ runtime.Reply, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
		}
		done.Add(1)
		<-credits
	}
	stop := env.step("fill the log", int64(cfg.Msgs), done.Load)
	defer stop()
	for i := range cfg.Msgs {
		sig, err := bus.NewSignal(builtin.CounterIncrement, "bench/replay", data)
		if err != nil {
			return fmt.Errorf("build signal %d: %w", i, err)
		}
		select {
		case credits <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := rt.Deliver(ids[i%len(ids)], sig, reply); err != nil {
			return fmt.Errorf("deliver signal %d to %s: %w", i, ids[i%len(ids)], err)
		}
	}
	if _, capped := waitFor(ctx, done.Load, int64(cfg.Msgs)); capped {
		return ctx.Err()
	}
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("%d signals were refused, the first with: %w", failed.Load(), *p)
	}
	// Let the directives run and their outcomes be recorded, as they are
	// on a node that was not cut off: recovery then has decisions to
	// replay, not emits to send again.
	for rt.Counts().Queued > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// timeRecovery does what node.Start does to bring the agents back and
// returns how long it took, the CPU time it used and how many entries
// their streams hold.
func timeRecovery(ctx context.Context, env *Env, logDir string, want int) (time.Duration, time.Duration, int64, error) {
	types := agents.NewRegistry()
	if err := builtin.Register(types); err != nil {
		return 0, 0, 0, fmt.Errorf("register the built-in agent types: %w", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	stop := env.step(MetricRecovery, int64(want), func() int64 { return 0 })
	cpu0, cpuOK := processCPU()
	t0 := time.Now()
	l, err := eventlog.Open(logDir, eventlog.Options{Logger: quiet})
	if err != nil {
		stop()
		return 0, 0, 0, fmt.Errorf("open the log: %w", err)
	}
	defer l.Close()
	var entries int64
	for _, s := range l.Streams("agent/") {
		entries += int64(s.Count)
	}
	rt, err := runtime.New(runtime.Config{Store: l, Types: types, Logger: quiet})
	if err != nil {
		stop()
		return 0, 0, 0, fmt.Errorf("new runtime: %w", err)
	}
	got, err := rt.Recover(ctx)
	elapsed := time.Since(t0)
	cpu := cpuSince(cpu0, cpuOK)
	stop()
	if cerr := rt.Shutdown(context.Background()); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("recover: %w", err)
	}
	if got != want {
		return 0, 0, 0, fmt.Errorf("recovered %d agents, want %d", got, want)
	}
	return elapsed, cpu, entries, nil
}

// timeRead reads every agent stream without folding it: the read limit.
// It returns how long that took, the CPU time it used and the entries
// read.
func timeRead(ctx context.Context, env *Env, logDir string) (time.Duration, time.Duration, int64, error) {
	l, err := eventlog.Open(logDir, eventlog.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("open the log: %w", err)
	}
	defer l.Close()
	streams := l.Streams("agent/")
	var total int64
	for _, s := range streams {
		total += int64(s.Count)
	}
	var n atomic.Int64
	stop := env.step(MetricReadOnly, total, n.Load)
	defer stop()
	cpu0, cpuOK := processCPU()
	t0 := time.Now()
	for _, s := range streams {
		if err := ctx.Err(); err != nil {
			return 0, 0, 0, err
		}
		for _, err := range l.ReadStream(s.Stream, eventlog.ReadOptions{}) {
			if err != nil {
				return 0, 0, 0, fmt.Errorf("read %s: %w", s.Stream, err)
			}
			n.Add(1)
		}
	}
	return time.Since(t0), cpuSince(cpu0, cpuOK), n.Load(), nil
}

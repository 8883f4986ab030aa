package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/emitstream"
)

// Metric names of the cast scenario.
const (
	MetricCast = "durable cast"
	// MetricCastEmitStream is the same run on a node with the emit
	// stream (serve --emit-stream): what keeping every emit in JetStream
	// costs, beside the default node.
	MetricCastEmitStream = "durable cast, emit stream"
	baselineNoEmitStream = "no emit stream"
	// MetricCastCPU and MetricCastEmitStreamCPU are the CPU time per
	// durable cast of the two runs: less disturbed than throughput by what
	// else the machine runs.
	MetricCastCPU           = "durable cast CPU"
	MetricCastEmitStreamCPU = "durable cast CPU, emit stream"
	MetricRawNATS           = "raw NATS pub/sub"
	MetricRawPebble         = "raw Pebble synced batches"
	MetricGroupSize         = "commit group"
	baselineRawNATS         = "raw NATS"
	baselineRawPebble       = "raw Pebble"
)

// rawSubjectPrefix carries the raw NATS baseline; the node does not
// listen there.
const rawSubjectPrefix = "bench.raw."

// The pending limits of the baseline subscribers, the ones the node's bus
// gives its own subscriptions.
const (
	pendingMsgs  = 1 << 20
	pendingBytes = 1 << 30
)

func runCast(ctx context.Context, env *Env) ([]Metric, error) {
	cfg := env.Config
	run := bus.NewID()
	msgs, err := newMessages(cfg.MsgSize, "bench/cast", run)
	if err != nil {
		return nil, err
	}

	durable, groups, err := castDurable(ctx, env, msgs, "node", emitstream.Config{})
	if err != nil {
		return nil, err
	}
	streamed, _, err := castDurable(ctx, env, msgs, "node-emit-stream", emitstream.Config{On: true})
	if err != nil {
		return nil, fmt.Errorf("durable cast with the emit stream: %w", err)
	}
	raw, err := castRawNATS(ctx, env, msgs)
	if err != nil {
		return nil, fmt.Errorf("raw NATS baseline: %w", err)
	}
	perGroup := 1.0
	if groups > 0 {
		perGroup = max(1, float64(durable.Done)/float64(groups))
	}
	batch := int(perGroup + 0.5)
	disk, err := rawPebble(ctx, env, filepath.Join(env.Dir, "raw-pebble"), msgs.wire(), batch)
	if err != nil {
		return nil, fmt.Errorf("raw Pebble baseline: %w", err)
	}

	rawM := Metric{Name: MetricRawNATS, Value: raw.rate(), Unit: "msgs/s", Count: raw.Done, Note: raw.note(cfg.Msgs)}
	diskM := Metric{Name: MetricRawPebble, Value: disk.rate(), Unit: "msgs/s", Count: disk.Done,
		Note: joinNotes(fmt.Sprintf("%d B values, %d per synced batch", len(msgs.wire()), batch), disk.note(cfg.Msgs))}
	castM := Metric{Name: MetricCast, Value: durable.rate(), Unit: "signals/s", Count: durable.Done,
		Note: joinNotes(fmt.Sprintf("%d publishers → %d counters", cfg.Publishers, cfg.Agents), durable.note(cfg.Msgs))}
	streamM := Metric{Name: MetricCastEmitStream, Value: streamed.rate(), Unit: "signals/s", Count: streamed.Done,
		Note: joinNotes("the same casts on a node with --emit-stream, run after the one without", streamed.note(cfg.Msgs))}
	streamM.compare(baselineNoEmitStream, castM.Value)
	castM.compare(baselineRawNATS, rawM.Value)
	castM.compare(baselineRawPebble, diskM.Value)
	groupM := Metric{Name: MetricGroupSize, Value: perGroup, Unit: "signals/fsync", Count: groups,
		Note: "signals committed per fsync group seen (groups sampled at each append and watermark advance; an upper bound)"}
	metrics := []Metric{castM, streamM, rawM, diskM, groupM}
	if durable.cpuPerDone() > 0 && streamed.cpuPerDone() > 0 {
		const cpuNote = "user and system CPU of the whole process (node and publishers) per committed cast"
		cpuM := Metric{Name: MetricCastCPU, Value: durable.cpuPerDone(), Unit: "µs CPU/signal", Count: durable.Done, Note: cpuNote}
		streamCPU := Metric{Name: MetricCastEmitStreamCPU, Value: streamed.cpuPerDone(), Unit: "µs CPU/signal", Count: streamed.Done, Note: cpuNote}
		streamCPU.compare(baselineNoEmitStream, cpuM.Value)
		metrics = append(metrics, cpuM, streamCPU)
	}
	return metrics, nil
}

// castDurable is the measured run through the runtime. It returns the run
// and the number of commit groups seen while it ran.
func castDurable(ctx context.Context, env *Env, msgs *messages, dir string, es emitstream.Config) (flowResult, int64, error) {
	cfg := env.Config
	commits := &commitCounter{credits: make(chan struct{}, cfg.Window)}
	n, err := startNodeWith(ctx, filepath.Join(env.Dir, dir), commits, false, es)
	if err != nil {
		return flowResult{}, 0, err
	}
	defer shutdown(n)
	ids := agentIDs("c", cfg.Agents)
	stop := env.step("start counters", int64(len(ids)), func() int64 { return int64(len(n.Runtime().List())) })
	err = startCounters(ctx, n.Runtime(), ids, runtime.Options{})
	stop()
	if err != nil {
		return flowResult{}, 0, err
	}

	var subjects bus.Subjects
	groups := &groupCounter{}
	watcher := watchGroups(n.Log(), groups)
	commits.groups.Store(groups)
	f := flow{
		url: n.URL(), publishers: cfg.Publishers, total: cfg.Msgs, msgs: msgs,
		subject:  func(i int) string { return subjects.Agent(ids[i%len(ids)], builtin.CounterIncrement) },
		credits:  commits.credits,
		done:     commits.n.Load,
		duration: cfg.Duration,
	}
	stop = env.step(MetricCast, int64(cfg.Msgs), commits.n.Load)
	cpu0, cpuOK := processCPU()
	res, err := f.run(ctx)
	if cpu1, ok := processCPU(); ok && cpuOK {
		// CPU time is less disturbed than throughput by what else runs
		// on the machine: it shows what the emit stream costs per cast.
		res.CPU = cpu1 - cpu0
	}
	stop()
	commits.groups.Store(nil)
	seen := watcher.stop()
	if err != nil {
		return res, seen, err
	}
	if res.Capped {
		return res, seen, nil
	}
	// An agent shows its new version just after its append returns, so
	// give the last ones a moment.
	sum, err := awaitVersions(ctx, n.Runtime(), ids, int64(cfg.Msgs))
	if err != nil {
		return res, seen, err
	}
	if sum != int64(cfg.Msgs) {
		return res, seen, fmt.Errorf("the runtime reported %d casts committed but the counters' versions add up to %d; see the dead letters with jido-bus log --data-dir %s", res.Done, sum, filepath.Join(env.Dir, "node"))
	}
	return res, seen, nil
}

// castRawNATS sends the same messages to one subscriber that counts them,
// on a node at rest.
func castRawNATS(ctx context.Context, env *Env, msgs *messages) (flowResult, error) {
	cfg := env.Config
	n, err := startNode(ctx, filepath.Join(env.Dir, "raw-nats"), nil, false)
	if err != nil {
		return flowResult{}, err
	}
	defer shutdown(n)
	sub, err := connectClients(n.URL(), 1, "subscriber")
	if err != nil {
		return flowResult{}, err
	}
	defer closeAll(sub)
	counter := &commitCounter{credits: make(chan struct{}, cfg.Window)}
	s, err := sub[0].Subscribe(rawSubjectPrefix+">", func(*nats.Msg) { counter.committed(1) })
	if err != nil {
		return flowResult{}, fmt.Errorf("subscribe: %w", err)
	}
	if err := s.SetPendingLimits(pendingMsgs, pendingBytes); err != nil {
		return flowResult{}, fmt.Errorf("set pending limits: %w", err)
	}
	if err := sub[0].Flush(); err != nil {
		return flowResult{}, fmt.Errorf("flush the subscription: %w", err)
	}
	f := flow{
		url: n.URL(), publishers: cfg.Publishers, total: cfg.Msgs, msgs: msgs,
		subject: func(i int) string {
			return rawSubjectPrefix + "c" + strconv.Itoa(i%cfg.Agents) + "." + builtin.CounterIncrement
		},
		credits:  counter.credits,
		done:     counter.n.Load,
		duration: cfg.Duration,
	}
	stop := env.step(MetricRawNATS, int64(cfg.Msgs), counter.n.Load)
	defer stop()
	return f.run(ctx)
}

func joinNotes(notes ...string) string {
	out := ""
	for _, n := range notes {
		if n == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += n
	}
	return out
}

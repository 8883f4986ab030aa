package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
)

// Metric names of the cluster scenario.
const (
	MetricClusterCast       = "cluster durable cast"
	MetricClusterCastCPU    = "cluster durable cast CPU"
	MetricClusterCallPrefix = "cluster call "
	MetricClusterCallP99    = MetricClusterCallPrefix + "p99"
	MetricClusterCallRate   = "cluster call rate"
	MetricR3Async           = "raw R3 async publish"
	MetricR3AsyncCPU        = "raw R3 async publish CPU"
	MetricR3SyncPrefix      = "raw R3 sync publish "
	MetricClusterGroup      = "cluster log message"
	MetricFailoverPrefix    = "failover "
	MetricFailoverP50       = MetricFailoverPrefix + "p50"
	MetricFailoverMax       = MetricFailoverPrefix + "max"
	baselineR3Async         = "raw R3 async"
	baselineR3Sync          = "raw R3 sync"
	// baselineCallBudget is the call latency goal of a cluster: twice
	// what JetStream takes to acknowledge one replicated write, and a
	// millisecond for the node.
	baselineCallBudget   = "2× raw R3 sync p99 + 1 ms"
	baselineSingleNode   = "single node"
	baselineFailoverGoal = "lease + 5 s"
	failoverAllowance    = 5 * time.Second
)

func runCluster(ctx context.Context, env *Env) ([]Metric, error) {
	cfg := env.Config
	commits := &commitCounter{credits: make(chan struct{}, cfg.Window)}
	bc, err := startBenchCluster(ctx, env, commits)
	if err != nil {
		return nil, err
	}
	defer bc.close()
	urls := bc.nats.URLs()

	ids := agentIDs("c", cfg.Agents)
	probes := probeIDs()
	all := append(slices.Clone(ids), probes...)
	stop := env.step("start counters", int64(len(all)), func() int64 {
		var n int64
		for _, nd := range bc.nodes {
			n += int64(len(nd.Runtime().List()))
		}
		return n
	})
	err = bc.startCounters(ctx, all)
	stop()
	if err != nil {
		return nil, err
	}

	msgs0, err := logMessages(ctx, bc.admin)
	if err != nil {
		return nil, err
	}
	cast, err := bc.cast(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("durable casts through the cluster: %w", err)
	}
	msgs1, err := logMessages(ctx, bc.admin)
	if err != nil {
		return nil, err
	}
	raw, err := newRawR3(ctx, bc.admin, bus.NewID())
	if err != nil {
		return nil, fmt.Errorf("raw R3 baseline: %w", err)
	}
	rawAsync, err := raw.async(ctx, env, urls, ids)
	if err != nil {
		return nil, fmt.Errorf("raw R3 async publishes: %w", err)
	}

	clients, err := connectClients(urls, 1, "cluster requester")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	nc := clients[0]
	callIDs := ids[:min(callAgents, len(ids))]
	callMsgs, err := newMessages(cfg.MsgSize, "bench/cluster-call", bus.NewID())
	if err != nil {
		return nil, err
	}
	var subjects bus.Subjects
	calls, err := latencies(ctx, env, MetricClusterCallPrefix+"latency", nc, callMsgs,
		func(i int) string { return subjects.Agent(callIDs[i%len(callIDs)], builtin.CounterIncrement) })
	if err != nil {
		return nil, fmt.Errorf("calls through the cluster: %w", err)
	}
	rawSync, err := raw.sync(ctx, env, nc, callIDs)
	if err != nil {
		return nil, fmt.Errorf("raw R3 sync publishes: %w", err)
	}

	failovers, err := bc.failovers(ctx, nc, probes)
	if err != nil {
		return nil, fmt.Errorf("failover: %w", err)
	}
	out := clusterMetrics(env, cast, rawAsync, calls, rawSync, failovers, raw)
	if msgs1 > msgs0 {
		out = append(out, Metric{Name: MetricClusterGroup, Value: float64(cast.Done) / float64(msgs1-msgs0), Unit: "signals/message", Count: int64(msgs1 - msgs0),
			Note: "casts committed per message the nodes wrote to the log's partition streams while they ran (an agent commits what it took meanwhile as one message)"})
	}
	return out, nil
}

// cast is the cast scenario's durable run through the cluster: the
// publishers connect to the servers (each to one the client picks), and a
// cast counts when the node that owns its counter committed it to the
// replicated log.
func (bc *benchCluster) cast(ctx context.Context, ids []string) (flowResult, error) {
	cfg := bc.env.Config
	msgs, err := newMessages(cfg.MsgSize, "bench/cluster-cast", bus.NewID())
	if err != nil {
		return flowResult{}, err
	}
	var subjects bus.Subjects
	base := bc.commits.n.Load()
	done := func() int64 { return bc.commits.n.Load() - base }
	f := flow{
		url: bc.nats.URLs(), publishers: cfg.Publishers, total: cfg.Msgs, msgs: msgs,
		subject:  func(i int) string { return subjects.Agent(ids[i%len(ids)], builtin.CounterIncrement) },
		credits:  bc.commits.credits,
		done:     done,
		duration: cfg.Duration,
	}
	epochs0, err := bc.epochs(ctx)
	if err != nil {
		return flowResult{}, err
	}
	stop := bc.env.step(MetricClusterCast, int64(cfg.Msgs), done)
	cpu0, cpuOK := processCPU()
	res, err := f.run(ctx)
	if cpu1, ok := processCPU(); ok && cpuOK {
		res.CPU = cpu1 - cpu0
	}
	stop()
	if err != nil {
		return res, err
	}
	// A node whose lease renewals (writes to the membership bucket on the
	// same servers) wait too long behind the log's writes gives its
	// partitions up, and the casts for them are refused: say so rather
	// than report the rate of what was left.
	epochs1, err := bc.epochs(ctx)
	if err != nil {
		return res, err
	}
	for p := range epochs0 {
		if epochs1[p] != epochs0[p] {
			return res, fmt.Errorf("partition %d moved while the casts ran (epoch %d → %d; %d of %d casts committed, the others refused): the nodes' logs %s say why (\"lease not renewed in time\": the membership's writes waited behind the log's); fewer casts in flight (--window) may keep the leases", p, epochs0[p], epochs1[p], res.Done, cfg.Msgs, filepath.Join(bc.env.Dir, "n*.log"))
		}
	}
	if res.Capped {
		return res, nil
	}
	sum, err := bc.awaitVersions(ctx, ids, int64(cfg.Msgs))
	if err != nil {
		return res, err
	}
	if sum != int64(cfg.Msgs) {
		return res, fmt.Errorf("the nodes reported %d casts committed but the counters' versions add up to %d", res.Done, sum)
	}
	return res, nil
}

// clusterMetrics sets the cluster's figures beside their baselines.
func clusterMetrics(env *Env, cast, rawAsync flowResult, calls, rawSync latencyRun, failovers []time.Duration, raw *rawR3) []Metric {
	cfg := env.Config
	shape := fmt.Sprintf("%d NATS servers (R%d, sync_always), %d nodes, %d partitions", clusterServers, clusterReplicas, clusterNodes, clusterPartitions)
	castM := Metric{Name: MetricClusterCast, Value: cast.rate(), Unit: "signals/s", Count: cast.Done,
		Note: joinNotes(fmt.Sprintf("%d publishers → %d counters; %s", cfg.Publishers, cfg.Agents, shape), cast.note(cfg.Msgs))}
	castM.compare(baselineR3Async, rawAsync.rate())
	if m, ok := env.Earlier("cast", MetricCast); ok {
		castM.compare(baselineSingleNode, m.Value)
	}
	rawM := Metric{Name: MetricR3Async, Value: rawAsync.rate(), Unit: "msgs/s", Count: rawAsync.Done,
		Note: joinNotes(fmt.Sprintf("%d B messages (a decision on one counter signal as the log stored it: %d events), %d publishers, window %d, %d streams set up as the log's", raw.size(), raw.events, cfg.Publishers, cfg.Window, clusterPartitions), rawAsync.note(cfg.Msgs))}
	out := []Metric{castM, rawM}
	if cast.cpuPerDone() > 0 && rawAsync.cpuPerDone() > 0 {
		const cpuNote = "user and system CPU of the whole process (the 3 servers, the nodes and the publishers) per "
		cpuM := Metric{Name: MetricClusterCastCPU, Value: cast.cpuPerDone(), Unit: "µs CPU/signal", Count: cast.Done, Note: cpuNote + "committed cast"}
		cpuM.compare(baselineR3Async, rawAsync.cpuPerDone())
		out = append(out, cpuM, Metric{Name: MetricR3AsyncCPU, Value: rawAsync.cpuPerDone(), Unit: "µs CPU/msg", Count: rawAsync.Done, Note: cpuNote + "acknowledged publish"})
	}

	budget := 2*ms(rawSync.h.ValueAtQuantile(99)) + 1
	for _, p := range percentiles {
		m := Metric{Name: MetricClusterCallPrefix + p.name, Value: ms(calls.h.ValueAtQuantile(p.q)), Unit: "ms", Count: calls.h.TotalCount()}
		m.compare(baselineR3Sync, ms(rawSync.h.ValueAtQuantile(p.q)))
		if m.Name == MetricClusterCallP99 {
			m.compare(baselineCallBudget, budget)
		}
		if single, ok := env.Earlier("call", MetricCallPrefix+p.name); ok {
			m.compare(baselineSingleNode, single.Value)
		}
		out = append(out, m)
	}
	rate := Metric{Name: MetricClusterCallRate, Value: calls.rate(), Unit: "calls/s", Count: calls.h.TotalCount(),
		Note: joinNotes(fmt.Sprintf("one caller, %d counters", min(callAgents, cfg.Agents)), calls.note(cfg.Calls))}
	rate.compare(baselineR3Sync, rawSync.rate())
	out = append(out, rate)
	for _, p := range percentiles {
		out = append(out, Metric{Name: MetricR3SyncPrefix + p.name, Value: ms(rawSync.h.ValueAtQuantile(p.q)), Unit: "ms", Count: rawSync.h.TotalCount()})
	}
	out = append(out, Metric{Name: MetricR3SyncPrefix + "rate", Value: rawSync.rate(), Unit: "msgs/s", Count: rawSync.h.TotalCount(),
		Note: joinNotes("one at a time, each waiting for its acknowledgement", rawSync.note(cfg.Calls))})

	if len(failovers) > 0 {
		sorted := slices.Sorted(slices.Values(failovers))
		each := make([]string, len(failovers))
		for i, d := range failovers {
			each[i] = d.Round(10 * time.Millisecond).String()
		}
		note := fmt.Sprintf("lease %s; per kill, the slowest moved partition's time from its last acknowledgement before the node stopped to the first after: %s", cfg.ClusterLease, strings.Join(each, ", "))
		p50 := Metric{Name: MetricFailoverP50, Value: sorted[(len(sorted)-1)/2].Seconds(), Unit: "s", Count: int64(len(sorted)), Note: note}
		worst := Metric{Name: MetricFailoverMax, Value: sorted[len(sorted)-1].Seconds(), Unit: "s", Count: int64(len(sorted))}
		worst.compare(baselineFailoverGoal, (cfg.ClusterLease + failoverAllowance).Seconds())
		out = append(out, p50, worst)
	}
	return out
}

// logMessages counts the messages in the log's partition streams.
func logMessages(ctx context.Context, nc *nats.Conn) (uint64, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, fmt.Errorf("jetstream: %w", err)
	}
	var total uint64
	for p := range clusterPartitions {
		s, err := js.Stream(ctx, logStreamName(p))
		if err != nil {
			return 0, fmt.Errorf("read the log's stream %s: %w", logStreamName(p), err)
		}
		total += s.CachedInfo().State.Msgs
	}
	return total, nil
}

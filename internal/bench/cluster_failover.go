package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
)

// Failover: a node stops abruptly while a client calls a counter in each
// of its partitions, retrying what is refused or unanswered, and the
// figure is, for each moved partition, the time from the last call
// acknowledged before the stop to the first acknowledged among those sent
// after it. A kill's failover is its slowest partition's.
//
// The node stops the way a killed process does as far as the cluster can
// tell: its one NATS connection closes, so the servers drop its
// subscriptions at once, and it writes nothing more — no heartbeat, no
// hand-over; its partitions stay its own in the bucket until its lease
// runs out on the other node's clock. (A machine that vanishes without
// closing its sockets is slower to notice by the servers' ping interval,
// which this does not measure.)

const (
	// probeTimeout bounds one probing call: one sent to the node just
	// before it stopped is never answered.
	probeTimeout = time.Second
	// probeRetry is how long a prober waits after a refused call, so that
	// the refusals for a partition nobody serves yet (each one a dead
	// letter the surviving node fsyncs) do not take the disk and CPU it
	// needs to bring the partition back. It is the figure's resolution.
	probeRetry = 25 * time.Millisecond
)

// probeIDs names one counter in each partition: f0, f1 … as many as it
// takes.
func probeIDs() []string {
	ids := make([]string, clusterPartitions)
	found := 0
	for j := 0; found < clusterPartitions; j++ {
		id := "f" + strconv.Itoa(j)
		if p := partitionOf(id); ids[p] == "" {
			ids[p] = id
			found++
		}
	}
	return ids
}

// prober calls one counter again and again and keeps the time each
// acknowledged call was sent and answered.
type prober struct {
	id   string
	part int
	mu   sync.Mutex
	acks []probeAck
}

type probeAck struct{ sent, acked time.Time }

func (p *prober) run(ctx context.Context, nc *nats.Conn, msgs *messages, pub int) {
	var subjects bus.Subjects
	subject := subjects.Agent(p.id, builtin.CounterIncrement)
	for i := 0; ctx.Err() == nil; i++ {
		sent := time.Now()
		callCtx, cancel := context.WithTimeout(ctx, probeTimeout)
		reply, err := nc.RequestMsgWithContext(callCtx, msgs.msg(subject, pub, i))
		cancel()
		if err == nil && bytes.HasPrefix(reply.Data, okReply) {
			acked := time.Now()
			p.mu.Lock()
			p.acks = append(p.acks, probeAck{sent: sent, acked: acked})
			p.mu.Unlock()
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(probeRetry):
		}
	}
}

// ackedAfter reports whether a call sent at or after t was acknowledged.
func (p *prober) ackedAfter(t time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acks) > 0 && !p.acks[len(p.acks)-1].sent.Before(t)
}

// gap is the time from the last acknowledgement received before stop to
// the first acknowledgement of a call sent after killed.
func (p *prober) gap(stop, killed time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var last, first time.Time
	for _, a := range p.acks {
		if a.acked.Before(stop) {
			last = a.acked
		}
		if first.IsZero() && !a.sent.Before(killed) {
			first = a.acked
		}
	}
	if last.IsZero() || first.IsZero() {
		return 0, false
	}
	return first.Sub(last), true
}

// failovers stops a node cfg.Kills times (alternately the first and the
// second of the live nodes), measures the failover of its partitions, and
// replaces it with a fresh node once they answer again. It returns each
// kill's failover.
func (bc *benchCluster) failovers(ctx context.Context, nc *nats.Conn, probes []string) ([]time.Duration, error) {
	cfg := bc.env.Config
	msgs, err := newMessages(cfg.MsgSize, "bench/failover", bus.NewID())
	if err != nil {
		return nil, err
	}
	var done atomic.Int64
	stop := bc.env.step("failover", int64(cfg.Kills), done.Load)
	defer stop()
	var out []time.Duration
	for k := range cfg.Kills {
		d, err := bc.failover(ctx, nc, msgs, probes, k)
		if err != nil {
			return out, fmt.Errorf("kill %d of %d: %w", k+1, cfg.Kills, err)
		}
		out = append(out, d)
		done.Add(1)
	}
	return out, nil
}

// failover is one kill: of node k mod the nodes.
func (bc *benchCluster) failover(ctx context.Context, nc *nats.Conn, msgs *messages, probes []string, k int) (time.Duration, error) {
	v := k % len(bc.nodes)
	victim, victimID := bc.nodes[v], bc.ids[v]
	var probers []*prober
	for p := range clusterPartitions {
		if victim.Runtime().Serves(p) {
			probers = append(probers, &prober{id: probes[p], part: p})
		}
	}
	probeCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for i, p := range probers {
		wg.Go(func() { p.run(probeCtx, nc, msgs, k*clusterPartitions+i) })
	}
	// Every partition answers before the kill, so each has a last
	// acknowledgement to measure from.
	begin := time.Now()
	if err := bc.awaitProbers(ctx, probers, begin, "before the kill"); err != nil {
		return 0, err
	}

	stopped := time.Now()
	victim.Sever()
	killed := time.Now()
	if err := bc.awaitProbers(ctx, probers, killed, fmt.Sprintf("after node %s stopped", victimID)); err != nil {
		return 0, err
	}
	cancel()
	wg.Wait()
	var worst time.Duration
	for _, p := range probers {
		d, ok := p.gap(stopped, killed)
		if !ok {
			return 0, fmt.Errorf("partition %d has no acknowledgement on one side of the kill", p.part)
		}
		worst = max(worst, d)
	}

	// The stopped node is shut down for its goroutines and files (its
	// connection is gone, so it reaches nobody), and a fresh one joins and
	// takes its share before the next kill.
	_ = shutdown(victim)
	bc.nodes = slices.Delete(bc.nodes, v, v+1)
	bc.ids = slices.Delete(bc.ids, v, v+1)
	if err := bc.startNode(ctx); err != nil {
		return 0, err
	}
	if err := bc.awaitServed(ctx); err != nil {
		return 0, err
	}
	return worst, nil
}

// awaitProbers waits until every prober had a call sent at or after since
// acknowledged.
func (bc *benchCluster) awaitProbers(ctx context.Context, probers []*prober, since time.Time, when string) error {
	timeout := bc.servedTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		var waiting []int
		for _, p := range probers {
			if !p.ackedAfter(since) {
				waiting = append(waiting, p.part)
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("partitions %v answered no call %s within %s", waiting, when, timeout)
		case <-t.C:
		}
	}
}

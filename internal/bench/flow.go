package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// flow is one throughput run: publishers send total messages, each taking
// a credit first (credits bounds what is in flight; whoever counts
// arrivals hands them back), and the run ends when done reports total or
// the duration runs out.
type flow struct {
	url        string
	publishers int
	total      int
	subject    func(i int) string
	msgs       *messages
	credits    chan struct{}
	done       func() int64
	duration   time.Duration
	// build, when set, makes message i of publisher p; nil means
	// msgs.msg(subject(i), p, i).
	build func(p, i int) *nats.Msg
	// publisher, when set, returns how publisher p sends on nc; nil means
	// nc.PublishMsg.
	publisher func(p int, nc *nats.Conn) (func(*nats.Msg) error, error)
}

// flowResult is what a run achieved: Done of Sent arrived within Elapsed.
type flowResult struct {
	Sent, Done int64
	Elapsed    time.Duration
	Capped     bool // the duration ran out first
	// CPU is the CPU time the whole process (node and publishers) used
	// during the run, zero where it is not read (castDurable sets it).
	CPU time.Duration
}

// cpuPerDone is CPU per message done, in microseconds; 0 when unknown.
func (r flowResult) cpuPerDone() float64 {
	if r.CPU <= 0 || r.Done <= 0 {
		return 0
	}
	return float64(r.CPU.Microseconds()) / float64(r.Done)
}

func (r flowResult) rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Done) / r.Elapsed.Seconds()
}

// note says when the run was cut short.
func (r flowResult) note(total int) string {
	if !r.Capped {
		return ""
	}
	return fmt.Sprintf("stopped by --duration after %d of %d", r.Done, total)
}

// connect opens one client connection per publisher.
func connectClients(url string, count int, name string) ([]*nats.Conn, error) {
	conns := make([]*nats.Conn, 0, count)
	for i := range count {
		nc, err := nats.Connect(url, nats.Name(fmt.Sprintf("jido-bus bench %s %d", name, i)))
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("connect publisher %d to %s: %w", i, url, err)
		}
		conns = append(conns, nc)
	}
	return conns, nil
}

func closeAll(conns []*nats.Conn) {
	for _, nc := range conns {
		nc.Close()
	}
}

// run publishes and waits. Publisher p sends messages p, p+P, p+2P …
func (f flow) run(ctx context.Context) (flowResult, error) {
	conns, err := connectClients(f.url, f.publishers, "publisher")
	if err != nil {
		return flowResult{}, err
	}
	defer closeAll(conns)
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, f.duration)
	defer cancel()

	publish := make([]func(*nats.Msg) error, len(conns))
	for p, nc := range conns {
		publish[p] = nc.PublishMsg
		if f.publisher != nil {
			if publish[p], err = f.publisher(p, nc); err != nil {
				return flowResult{}, err
			}
		}
	}
	var sent atomic.Int64
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	start := time.Now()
	for p, nc := range conns {
		wg.Go(func() {
			for i := p; i < f.total; i += len(conns) {
				select {
				case f.credits <- struct{}{}:
				case <-ctx.Done():
					return
				}
				var m *nats.Msg
				if f.build != nil {
					m = f.build(p, i)
				} else {
					m = f.msgs.msg(f.subject(i), p, i)
				}
				if err := publish[p](m); err != nil {
					errs[p] = fmt.Errorf("publisher %d: publish message %d: %w", p, i, err)
					cancel()
					return
				}
				sent.Add(1)
			}
			if err := nc.Flush(); err != nil && ctx.Err() == nil {
				errs[p] = fmt.Errorf("publisher %d: flush: %w", p, err)
				cancel()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return flowResult{}, err
	}
	res := flowResult{Sent: sent.Load()}
	res.Done, res.Capped = waitFor(ctx, f.done, int64(f.total))
	res.Elapsed = time.Since(start)
	if err := parent.Err(); err != nil {
		return res, fmt.Errorf("stopped after %d of %d: %w", res.Done, f.total, err)
	}
	return res, nil
}

// pollInterval is how often a waiting run looks at its counter.
const pollInterval = 500 * time.Microsecond

// waitFor waits until done reaches target or ctx ends; capped says it
// ended first.
func waitFor(ctx context.Context, done func() int64, target int64) (n int64, capped bool) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		if n = done(); n >= target {
			return n, false
		}
		select {
		case <-ctx.Done():
			return done(), true
		case <-t.C:
		}
	}
}

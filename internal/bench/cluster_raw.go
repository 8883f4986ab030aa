package bench

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/agents/builtin"
)

// The raw R3 baseline: what JetStream itself does with the log's messages
// on the same cluster, in the same run. Its streams copy the settings of
// the log's partition streams (file storage, 3 replicas, deduplication,
// no limits), one per partition, and each message is the bytes of a
// counter decision as the log stored it (its headers and body), to the
// stream of the partition its agent is in, with a Msg-Id of its own and
// no fence.

// r3StreamPrefix and r3SubjectPrefix name the baseline's streams and
// their subjects.
const (
	r3StreamPrefix  = "BENCH_R3_"
	r3SubjectPrefix = "bench.r3."
)

// logStreamName is the log's stream of partition p (jslog's naming:
// the prefix in upper case, _LOG_, the partition).
func logStreamName(p int) string {
	return strings.ToUpper(clusterPrefix) + "_LOG_" + strconv.Itoa(p)
}

// rawR3 publishes copies of a decision the log stored into streams set up
// like the log's.
type rawR3 struct {
	header nats.Header // the stored decision's, without JetStream's own headers
	data   []byte
	prefix string // of every Msg-Id
	events int    // in the copied message
}

const (
	// hdrEvents is the log's header counting the events of a message.
	hdrEvents = "Jido-Events"
	// decisionEvents is what one decision on one signal holds: the
	// signal and its cmd record.
	decisionEvents = 2
	// templateScan bounds the messages read from each partition stream
	// to find one holding a single decision.
	templateScan = 256
)

// newRawR3 reads a counter decision from the log and makes the
// baseline's streams with the settings of the log's partition streams.
func newRawR3(ctx context.Context, nc *nats.Conn, run string) (*rawR3, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	r := &rawR3{prefix: run + "-"}
	bestEvents := 0
	for p := range clusterPartitions {
		s, err := js.Stream(ctx, logStreamName(p))
		if err != nil {
			return nil, fmt.Errorf("read the log's stream %s: %w", logStreamName(p), err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the log's stream %s: %w", logStreamName(p), err)
		}
		// The runtime commits the signals an agent took meanwhile as one
		// message, so the last ones hold many; the first increments of a
		// counter came one at a time. Copy one holding a single decision
		// (the fewest events), so that one raw publish is one signal.
		for seq := info.State.FirstSeq; seq <= min(info.State.LastSeq, info.State.FirstSeq+templateScan) && bestEvents != decisionEvents; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				return nil, fmt.Errorf("read message %d of %s: %w", seq, logStreamName(p), err)
			}
			events, _ := strconv.Atoi(m.Header.Get(hdrEvents))
			if events <= 0 || !bytes.Contains(m.Data, []byte(builtin.CounterIncrement)) || (bestEvents > 0 && events >= bestEvents) {
				continue
			}
			bestEvents, r.header, r.data = events, nats.Header{}, m.Data
			for k, v := range m.Header {
				if !strings.HasPrefix(k, "Nats-") {
					r.header[k] = v
				}
			}
		}
		cfg := info.Config
		cfg.Name = r3StreamPrefix + strconv.Itoa(p)
		cfg.Description = "jido-bus bench: raw publishes beside " + logStreamName(p)
		cfg.Subjects = []string{r3SubjectPrefix + strconv.Itoa(p) + ".>"}
		cfg.Metadata = nil
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			return nil, fmt.Errorf("create stream %s like %s: %w", cfg.Name, logStreamName(p), err)
		}
	}
	if r.data == nil {
		return nil, fmt.Errorf("no partition stream holds a counter decision to copy; did the casts commit?")
	}
	r.events = bestEvents
	return r, nil
}

// msg is the baseline's message i for agent id: the decision's bytes on
// the subject the log would use in the baseline's stream of the agent's
// partition.
func (r *rawR3) msg(id string, i int) *nats.Msg {
	h := make(nats.Header, len(r.header)+1)
	for k, v := range r.header {
		h[k] = v
	}
	h[jetstream.MsgIDHeader] = []string{r.prefix + strconv.Itoa(i)}
	return &nats.Msg{
		Subject: r3SubjectPrefix + strconv.Itoa(partitionOf(id)) + ".agent." + id,
		Header:  h,
		Data:    r.data,
	}
}

// size is the bytes of one message besides its subject.
func (r *rawR3) size() int {
	n := len(r.data)
	for k, vs := range r.header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// async publishes cfg.Msgs messages round-robin over ids from
// cfg.Publishers connections, each keeping at most cfg.Window
// unacknowledged, as the cast scenario's publishers do; a message counts
// when its acknowledgement arrives.
func (r *rawR3) async(ctx context.Context, env *Env, url string, ids []string) (flowResult, error) {
	cfg := env.Config
	acks := &commitCounter{credits: make(chan struct{}, cfg.Window)}
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	f := flow{
		url: url, publishers: cfg.Publishers, total: cfg.Msgs,
		credits: acks.credits, done: acks.n.Load, duration: cfg.Duration,
		publisher: func(_ int, nc *nats.Conn) (func(*nats.Msg) error, error) {
			pjs, err := jetstream.New(nc,
				jetstream.WithPublishAsyncMaxPending(cfg.Window),
				jetstream.WithPublishAsyncAckHandler(func(jetstream.JetStream, *nats.Msg, *jetstream.PubAck) { acks.committed(1) }),
				jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					acks.committed(1) // what failed is done too: the run must end
				}))
			if err != nil {
				return nil, fmt.Errorf("jetstream: %w", err)
			}
			return func(m *nats.Msg) error {
				_, err := pjs.PublishMsgAsync(m, jetstream.WithStallWait(cfg.Duration))
				return err
			}, nil
		},
	}
	f.build = func(_, i int) *nats.Msg { return r.msg(ids[i%len(ids)], i) }
	stop := env.step(MetricR3Async, int64(cfg.Msgs), acks.n.Load)
	cpu0, cpuOK := processCPU()
	res, err := f.run(ctx)
	if cpu1, ok := processCPU(); ok && cpuOK {
		res.CPU = cpu1 - cpu0
	}
	stop()
	if err != nil {
		return res, err
	}
	if p := firstErr.Load(); p != nil {
		return res, fmt.Errorf("%d publishes failed, the first with: %w", failed.Load(), *p)
	}
	return res, nil
}

// sync publishes cfg.Calls messages one after the other over ids, each
// waiting for its acknowledgement, as a call waits for its commit, and
// records each in µs.
func (r *rawR3) sync(ctx context.Context, env *Env, nc *nats.Conn, ids []string) (latencyRun, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return latencyRun{}, fmt.Errorf("jetstream: %w", err)
	}
	// Message numbers past the async run's, so no Msg-Id repeats one.
	base := env.Config.Msgs
	return timeEach(ctx, env, MetricR3SyncPrefix+"latency", func(ctx context.Context, i int, warmUp bool) error {
		n := base + 1 + i
		if warmUp {
			n = base + env.Config.Calls + 1 + i
		}
		m := r.msg(ids[i%len(ids)], n)
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			return fmt.Errorf("publish to %s: %w", m.Subject, err)
		}
		if ack.Duplicate {
			return fmt.Errorf("publish to %s: a duplicate of an earlier message; the baseline's Msg-Ids repeat", m.Subject)
		}
		return nil
	})
}

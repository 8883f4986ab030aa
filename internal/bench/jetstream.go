package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Metric names of the jetstream scenario.
const (
	MetricJSAsync       = "JetStream async publish"
	MetricJSSync        = "JetStream sync publish"
	MetricJSAsyncAlways = "JetStream async publish, sync_always"
	jsReadyTimeout      = 10 * time.Second
)

func runJetStream(ctx context.Context, env *Env) ([]Metric, error) {
	cfg := env.Config
	n, err := startNode(ctx, filepath.Join(env.Dir, "node"), nil, false)
	if err != nil {
		return nil, err
	}
	defer shutdown(n)
	msgs, err := newMessages(cfg.MsgSize, "bench/jetstream", "js")
	if err != nil {
		return nil, err
	}

	async, err := jsRun(ctx, env, n.URL(), msgs, "BENCH_ASYNC", MetricJSAsync, true)
	if err != nil {
		return nil, fmt.Errorf("async publish: %w", err)
	}
	sync, err := jsRun(ctx, env, n.URL(), msgs, "BENCH_SYNC", MetricJSSync, false)
	if err != nil {
		return nil, fmt.Errorf("sync publish: %w", err)
	}
	url, shutdown, err := startSyncAlways(filepath.Join(env.Dir, "sync-always"))
	if err != nil {
		return nil, err
	}
	defer shutdown()
	always, err := jsRun(ctx, env, url, msgs, "BENCH_ALWAYS", MetricJSAsyncAlways, true)
	if err != nil {
		return nil, fmt.Errorf("async publish with sync_always: %w", err)
	}

	lazy := "the node's server: files flushed every 2 min, not per write"
	out := []Metric{
		{Name: MetricJSAsync, Value: async.rate(), Unit: "msgs/s", Count: async.Done,
			Note: joinNotes(fmt.Sprintf("%d publishers, window %d; %s", cfg.Publishers, cfg.Window, lazy), async.note(cfg.Msgs))},
		{Name: MetricJSSync, Value: sync.rate(), Unit: "msgs/s", Count: sync.Done,
			Note: joinNotes(fmt.Sprintf("%d publishers, one at a time each; %s", cfg.Publishers, lazy), sync.note(cfg.Msgs))},
		{Name: MetricJSAsyncAlways, Value: always.rate(), Unit: "msgs/s", Count: always.Done,
			Note: joinNotes("a second server with sync_always: an fsync per write, as durable as the jido-bus log", always.note(cfg.Msgs))},
	}
	if m, ok := env.Earlier("cast", MetricCast); ok {
		for i := range out {
			out[i].compare(baselineCast, m.Value)
		}
	}
	return out, nil
}

// jsRun creates a file-storage stream and publishes cfg.Msgs messages to
// it, each with its ce-id as Nats-Msg-Id (JetStream's deduplication, as the
// log deduplicates by source and id), asynchronously within the window or
// synchronously, one at a time per publisher.
func jsRun(ctx context.Context, env *Env, url string, msgs *messages, stream, step string, async bool) (flowResult, error) {
	cfg := env.Config
	admin, err := connectClients(url, 1, "jetstream admin")
	if err != nil {
		return flowResult{}, err
	}
	defer closeAll(admin)
	js, err := jetstream.New(admin[0])
	if err != nil {
		return flowResult{}, fmt.Errorf("jetstream: %w", err)
	}
	prefix := "bench.js." + stream
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: stream, Subjects: []string{prefix + ".>"}, Storage: jetstream.FileStorage,
	}); err != nil {
		return flowResult{}, fmt.Errorf("create stream %s: %w", stream, err)
	}

	acks := &commitCounter{credits: make(chan struct{}, cfg.Window)}
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	fail := func(err error) {
		failed.Add(1)
		firstErr.CompareAndSwap(nil, &err)
		acks.committed(1) // what failed is done too: the run must end
	}
	f := flow{
		url: url, publishers: cfg.Publishers, total: cfg.Msgs, msgs: msgs,
		subject:  func(i int) string { return prefix + ".c" + strconv.Itoa(i%cfg.Agents) },
		credits:  acks.credits,
		done:     acks.n.Load,
		duration: cfg.Duration,
	}
	f.publisher = func(_ int, nc *nats.Conn) (func(*nats.Msg) error, error) {
		if async {
			pjs, err := jetstream.New(nc,
				jetstream.WithPublishAsyncMaxPending(cfg.Window),
				jetstream.WithPublishAsyncAckHandler(func(jetstream.JetStream, *nats.Msg, *jetstream.PubAck) { acks.committed(1) }),
				jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) { fail(err) }))
			if err != nil {
				return nil, fmt.Errorf("jetstream: %w", err)
			}
			return func(m *nats.Msg) error {
				m.Header.Set(jetstream.MsgIDHeader, m.Header["ce-id"][0])
				_, err := pjs.PublishMsgAsync(m, jetstream.WithStallWait(cfg.Duration))
				return err
			}, nil
		}
		pjs, err := jetstream.New(nc)
		if err != nil {
			return nil, fmt.Errorf("jetstream: %w", err)
		}
		return func(m *nats.Msg) error {
			m.Header.Set(jetstream.MsgIDHeader, m.Header["ce-id"][0])
			if _, err := pjs.PublishMsg(ctx, m); err != nil {
				return err
			}
			acks.committed(1)
			return nil
		}, nil
	}
	stop := env.step(step, int64(cfg.Msgs), acks.n.Load)
	res, err := f.run(ctx)
	stop()
	if err != nil {
		return res, err
	}
	if p := firstErr.Load(); p != nil {
		return res, fmt.Errorf("%d publishes failed, the first with: %w", failed.Load(), *p)
	}
	return res, nil
}

// startSyncAlways starts an in-process NATS server whose JetStream fsyncs
// every write, listening on a free local port.
func startSyncAlways(dir string) (url string, shutdown func(), err error) {
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: dir, SyncAlways: true,
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		return "", nil, fmt.Errorf("configure the sync_always server: %w", err)
	}
	s.Start()
	shutdown = func() {
		s.Shutdown()
		s.WaitForShutdown()
	}
	if !s.ReadyForConnections(jsReadyTimeout) {
		shutdown()
		return "", nil, errors.New("the sync_always NATS server was not ready after " + jsReadyTimeout.String())
	}
	return s.ClientURL(), shutdown, nil
}

package jslog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/internal/jsplace"
)

// Log is the event log on JetStream. It is safe for concurrent use; the
// appends to one stream are serialised in the Log (JetStream refuses a
// second in-flight write on a subject with an expected sequence anyway),
// appends to different streams run in parallel.
type Log struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	opts  Options
	upper string // the stream name prefix, Prefix in upper case

	parts []jetstream.Stream // by partition
	snaps jetstream.Stream

	cache *stateCache
	stats struct{ fenced, duplicates atomic.Int64 }
}

// Stats counts what the servers answered the Log's appends with, beside
// plain acknowledgements.
type Stats struct {
	// Fenced is how many publishes were refused because their subject had
	// moved past what the Log knew (another writer, or a write in flight).
	Fenced int64
	// Duplicates is how many publishes the servers answered as already
	// stored under their Msg-Id (a retry after a lost acknowledgement).
	Duplicates int64
}

// Stats returns the counts since Open.
func (l *Log) Stats() Stats {
	return Stats{Fenced: l.stats.fenced.Load(), Duplicates: l.stats.duplicates.Load()}
}

// Open creates the partition streams and the snapshot stream on the
// cluster nc is connected to, or checks the existing ones: a stream with a
// setting that may drop or lose an entry, or made for another number of
// partitions, is refused with a *SettingError (errors.Is ErrUnsafe) for
// each setting. It does not check the servers' own settings: call
// CheckServers with what FetchServerSettings reads. The Log does not own
// nc; close nc after the Log.
func Open(ctx context.Context, nc *nats.Conn, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if opts.Partitions < 0 || opts.Replicas < 1 || opts.Replicas > 5 {
		return nil, fmt.Errorf("open log: %d partitions and %d replicas: partitions must be positive, replicas 1 to 5", opts.Partitions, opts.Replicas)
	}
	if opts.Replicas < 3 && !opts.AllowFewerReplicas {
		return nil, &SettingError{"log options", "replicas", fmt.Sprint(opts.Replicas),
			"with fewer than 3 replicas the loss of one server's disk loses acknowledged entries; use 3, or allow fewer explicitly for development"}
	}
	if strings.ContainsAny(opts.Prefix, ".*> \t\r\n") {
		return nil, fmt.Errorf("open log: prefix %q must be one subject token (no '.', '*', '>' or spaces)", opts.Prefix)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	l := &Log{nc: nc, js: js, opts: opts, upper: strings.ToUpper(opts.Prefix), cache: newStateCache(opts.CacheStreams)}
	var errs []error
	for p := range opts.Partitions {
		s, err := l.ensure(ctx, l.partitionConfig(p), func(c jetstream.StreamConfig) error { return l.checkPartition(p, c) })
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l.parts = append(l.parts, s)
	}
	s, err := l.ensure(ctx, l.snapshotConfig(), l.checkSnapshots)
	if err != nil {
		errs = append(errs, err)
	}
	l.snaps = s
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return l, nil
}

// ensure returns the stream cfg names, creating it when missing and
// checking it otherwise.
func (l *Log) ensure(ctx context.Context, cfg jetstream.StreamConfig, check func(jetstream.StreamConfig) error) (jetstream.Stream, error) {
	s, err := l.js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		err = jsplace.Retry(ctx, cfg.Replicas, func() (err error) {
			s, err = l.js.CreateStream(ctx, cfg)
			return err
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another node created it first (with other settings, or
			// CreateStream would have returned it): check what is there.
			s, err = l.js.Stream(ctx, cfg.Name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	if err := check(s.CachedInfo().Config); err != nil {
		return nil, err
	}
	return s, nil
}

// Partitions is P.
func (l *Log) Partitions() int { return l.opts.Partitions }

// Prefix is the first token of the log's subjects ("jido"); in upper case
// it begins its streams' names (JIDO_LOG_0 …).
func (l *Log) Prefix() string { return l.opts.Prefix }

// StreamName is the JetStream stream that holds log stream stream.
func (l *Log) StreamName(stream string) string {
	return l.partitionStreamName(Partition(stream, l.opts.Partitions))
}

// Subject is the subject log stream stream is kept on.
func (l *Log) Subject(stream string) string {
	return l.logSubject(stream, Partition(stream, l.opts.Partitions))
}

// timeout is a context for a request that has none of its own.
func (l *Log) timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), l.opts.Timeout)
}

// request is the context of one request made within ctx: Timeout, or
// less if ctx ends first.
func (l *Log) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.opts.Timeout)
}

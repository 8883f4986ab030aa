package jslog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog"
)

// Verifying the replicated log. JetStream checksums its own blocks; what
// it cannot know is whether its messages still make a log: that each
// subject decodes to a stream of its partition, that each message's
// headers and body agree, that a stream's versions follow each other
// without a gap, and that a snapshot is of a stream that reaches its
// version. Verify reads every message of every partition stream once, in
// order, through a consumer of its own, then every snapshot.

// verifyBatch is how many messages one fetch asks for.
const verifyBatch = 512

// verifyFetchWait bounds one fetch: it returns as soon as what it asked
// for arrived, which is everything up to the sequence that was last when
// the scan began unless messages were removed (a gap then costs one
// wait).
const verifyFetchWait = 5 * time.Second

// Verify reads every message of the log and reports each one that does
// not decode, is on a subject that is not a stream of its partition, or
// does not continue its stream's versions; and each snapshot whose
// headers are damaged or whose version is past its stream's. The report
// counts StreamEntries as the events read and GlobalEntries as the
// JetStream messages read (one per append, and one per snapshot). It
// checks what the partition streams held when the scan of each began;
// appends go on meanwhile. progress, if not nil, is called after each
// fetch with the entries checked so far. The error is for a failure to
// read at all (or ctx ending), not for damage.
func (l *Log) Verify(ctx context.Context, progress func(checked uint64)) (eventlog.VerifyReport, error) {
	r := eventlog.VerifyReport{Damaged: []*eventlog.CorruptError{}}
	heads := map[string]uint64{}
	for p := range l.opts.Partitions {
		if err := l.scan(ctx, l.parts[p], func(m *jetstream.RawStreamMsg) {
			l.verifyMessage(p, m, heads, &r)
		}, func() { report(progress, r) }); err != nil {
			return r, err
		}
	}
	if err := l.scan(ctx, l.snaps, func(m *jetstream.RawStreamMsg) {
		l.verifySnapshot(m, heads, &r)
	}, func() { report(progress, r) }); err != nil {
		return r, err
	}
	return r, nil
}

func report(progress func(uint64), r eventlog.VerifyReport) {
	if progress != nil {
		progress(r.StreamEntries + r.GlobalEntries)
	}
}

// verifyMessage checks message m of partition p; heads holds each
// stream's version as far as the scan has come.
func (l *Log) verifyMessage(p int, m *jetstream.RawStreamMsg, heads map[string]uint64, r *eventlog.VerifyReport) {
	r.GlobalEntries++
	where := fmt.Sprintf("message %d of %s", m.Sequence, l.partitionStreamName(p))
	base := l.opts.Prefix + ".log." + strconv.Itoa(p) + "."
	name, ok := streamOfSubject(strings.TrimPrefix(m.Subject, base))
	if !ok || !strings.HasPrefix(m.Subject, base) || Partition(name, l.opts.Partitions) != p {
		r.Damaged = append(r.Damaged, &eventlog.CorruptError{GlobalSeq: m.Sequence,
			Reason: fmt.Sprintf("%s is on subject %s, which is not a log stream of partition %d: no read will find it", where, m.Subject, p)})
		return
	}
	entries, err := decodeEntries(name, m)
	if ce, ok := errors.AsType[*eventlog.CorruptError](err); ok {
		ce.Reason = where + ": " + ce.Reason
		r.Damaged = append(r.Damaged, ce)
		if h, herr := readHeader(m); herr == nil {
			heads[name] = h.version // later messages are checked against it
		}
		return
	}
	r.StreamEntries += uint64(len(entries))
	if got := m.Header.Get(hdrStream); got != name {
		r.Damaged = append(r.Damaged, &eventlog.CorruptError{Stream: name, Seq: entries[0].Seq, GlobalSeq: m.Sequence,
			Reason: fmt.Sprintf("%s has header %s %q, its subject says %s", where, hdrStream, got, name)})
	}
	first, last := entries[0].Seq, entries[len(entries)-1].Seq
	// The first message of a stream may begin past version 1: the
	// stream was truncated below it (TruncateBefore).
	if prev, seen := heads[name]; seen && first != prev+1 {
		r.Damaged = append(r.Damaged, &eventlog.CorruptError{Stream: name, Seq: first, GlobalSeq: m.Sequence,
			Reason: fmt.Sprintf("%s starts at version %d, the stream was at %d: the versions of %s are not consecutive", where, first, prev, name)})
	}
	heads[name] = last
}

// verifySnapshot checks snapshot message m against the streams' heads.
func (l *Log) verifySnapshot(m *jetstream.RawStreamMsg, heads map[string]uint64, r *eventlog.VerifyReport) {
	r.GlobalEntries++
	name := m.Header.Get(hdrStream)
	where := fmt.Sprintf("snapshot message %d of %s", m.Sequence, l.snapshotStreamName())
	v, err := strconv.ParseUint(m.Header.Get(hdrVersion), 10, 64)
	switch {
	case eventlog.ValidateStream(name) != nil || m.Subject != l.snapshotSubject(name):
		r.Damaged = append(r.Damaged, &eventlog.CorruptError{Stream: name,
			Reason: fmt.Sprintf("%s on subject %s has header %s %q, which does not name the stream of its subject", where, m.Subject, hdrStream, name)})
	case err != nil:
		r.Damaged = append(r.Damaged, &eventlog.CorruptError{Stream: name,
			Reason: fmt.Sprintf("%s has no valid %s header: %v", where, hdrVersion, err)})
	case v > heads[name]:
		r.Damaged = append(r.Damaged, &eventlog.CorruptError{Stream: name, Seq: v,
			Reason: fmt.Sprintf("%s is at version %d, past the stream's last version %d: recovery would skip entries that are not there", where, v, heads[name])})
	}
}

// How long scan waits for a consumer it made to answer: up to
// consumerReadyTries pauses of consumerReadyPause.
const (
	consumerReadyTries = 100
	consumerReadyPause = 50 * time.Millisecond
)

// scan reads every message s holds now, in order, through an ephemeral
// consumer it deletes when done, calling visit for each and fetched after
// each fetch.
func (l *Log) scan(ctx context.Context, s jetstream.Stream, visit func(*jetstream.RawStreamMsg), fetched func()) error {
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("verify: read stream %s: %w", s.CachedInfo().Config.Name, err)
	}
	name, target := info.Config.Name, info.State.LastSeq
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Description:       "jido-bus log verify",
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: time.Minute, // a verify that dies leaves nothing behind for long
	})
	if err != nil {
		return fmt.Errorf("verify: read stream %s: %w", name, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opts.Timeout)
		_ = s.DeleteConsumer(dctx, cons.CachedInfo().Name)
		cancel()
	}()
	var last uint64
	notReady := 0
	for last < target {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := fetchInto(ctx, cons, int(min(verifyBatch, target-last)), func(m *jetstream.RawStreamMsg) {
			last = m.Sequence
			visit(m)
		})
		if errors.Is(err, nats.ErrNoResponders) && n == 0 && notReady < consumerReadyTries {
			// A consumer just made on a cluster answers once its
			// placement is done: a moment, not a failure.
			notReady++
			select {
			case <-time.After(consumerReadyPause):
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err != nil {
			return fmt.Errorf("verify: read stream %s after sequence %d: %w", name, last, err)
		}
		fetched()
		if n == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			break // the messages up to target were removed since the scan began
		}
	}
	return nil
}

// fetchInto fetches up to n messages from cons, within verifyFetchWait,
// and passes each to visit; it returns how many came.
func fetchInto(ctx context.Context, cons jetstream.Consumer, n int, visit func(*jetstream.RawStreamMsg)) (int, error) {
	fctx, cancel := context.WithTimeout(ctx, verifyFetchWait)
	defer cancel()
	batch, err := cons.Fetch(n, jetstream.FetchContext(fctx))
	if err != nil {
		return 0, err
	}
	got := 0
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			return got, err
		}
		visit(&jetstream.RawStreamMsg{Subject: m.Subject(), Sequence: md.Sequence.Stream, Header: m.Headers(), Data: m.Data(), Time: md.Timestamp})
		got++
	}
	if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
		return got, err
	}
	return got, ctx.Err()
}

package jslog

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Truncated says what TruncateBefore removed, or with a dry run would:
// Removed entries, versions From to To inclusive (0, 0 when none), and
// Bytes, the size of their messages (one copy).
type Truncated struct {
	Removed    int
	From, To   uint64
	Bytes      uint64
	KeptBefore uint64 // the first version kept
}

// TruncateBefore removes the entries of stream with a version below
// before, whole appends at a time, with a subject-filtered purge of its
// partition stream up to the message that holds the first version kept
// ($JS.API.STREAM.PURGE with filter and seq). The stream's last message
// always stays, even for a before past the head: it carries the stream's
// version, and every append is fenced on its sequence, so that a stale
// writer's expected last subject sequence still fails after a purge and
// versions go on from where they were. An append of several entries that
// straddles before is kept whole. With dryRun nothing changes. Reading a
// removed version afterwards fails with eventlog.ErrGone; an event re-sent
// after its original was removed is appended again, as on the Pebble log.
// A partition stream created with deny_purge (JetStream cannot turn it
// off) is refused, naming the setting.
func (l *Log) TruncateBefore(ctx context.Context, stream string, before uint64, dryRun bool) (Truncated, error) {
	if err := ctx.Err(); err != nil {
		return Truncated{}, err
	}
	if err := eventlog.ValidateStream(stream); err != nil {
		return Truncated{}, err
	}
	st := l.cache.acquire(l, stream)
	defer l.cache.release(st)
	if err := l.sync(ctx, st); err != nil {
		return Truncated{}, err
	}
	if st.version == 0 {
		return Truncated{}, fmt.Errorf("truncate %s: %w", stream, eventlog.ErrNotFound)
	}
	// k: the first message kept, the one holding version before, or the
	// last message when before is past the head.
	i, _ := slices.BinarySearchFunc(st.msgs, before, func(m msgRef, v uint64) int {
		if m.first <= v {
			return -1
		}
		return 1
	})
	k := max(i-1, 0)
	r := Truncated{KeptBefore: st.msgs[k].first}
	if k == 0 {
		return r, nil
	}
	r.From, r.To = st.msgs[0].first, st.msgs[k].first-1
	r.Removed = int(r.To - r.From + 1)
	ps := l.parts[st.part]
	for _, m := range st.msgs[:k] {
		raw, err := ps.GetMsg(ctx, m.seq)
		if err != nil {
			return Truncated{}, fmt.Errorf("truncate %s: read sequence %d: %w", stream, m.seq, err)
		}
		r.Bytes += uint64(len(raw.Data) + len(raw.Subject) + int(headerSize(raw.Header)))
	}
	if dryRun {
		return r, nil
	}
	info, err := ps.Info(ctx)
	if err != nil {
		return Truncated{}, fmt.Errorf("truncate %s: %w", stream, err)
	}
	if info.Config.DenyPurge {
		return Truncated{}, bus.Errorf(bus.ReasonForbidden, "truncate %s: stream %s was created with deny_purge, which JetStream does not let anyone turn off (nats stream edit refuses it): this log cannot be truncated; its entries stay, and the agents still recover from their snapshots", stream, info.Config.Name)
	}
	if err := ps.Purge(ctx, jetstream.WithPurgeSubject(st.subject), jetstream.WithPurgeSequence(st.msgs[k].seq)); err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			return Truncated{}, fmt.Errorf("truncate %s: purge of %s on %s refused: %w; the log's connection needs $JS.API.STREAM.PURGE.%s", stream, st.subject, info.Config.Name, err, info.Config.Name)
		}
		return Truncated{}, fmt.Errorf("truncate %s: purge of %s on %s: %w", stream, st.subject, info.Config.Name, err)
	}
	st.msgs = slices.Clone(st.msgs[k:])
	for key, pos := range st.ids {
		if pos.Seq < r.KeptBefore {
			delete(st.ids, key)
		}
	}
	return r, nil
}

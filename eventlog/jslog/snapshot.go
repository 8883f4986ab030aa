package jslog

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// SaveSnapshot durably replaces the snapshot of stream with data at
// version, which must not be above the stream's version (else an error
// wrapping eventlog.ErrWrongVersion). It returns once JetStream
// acknowledged it. A snapshot is one message: with its headers it must fit
// the servers' max_payload.
func (l *Log) SaveSnapshot(ctx context.Context, stream string, version uint64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := eventlog.ValidateStream(stream); err != nil {
		return err
	}
	st := l.cache.acquire(l, stream)
	defer l.cache.release(st)
	if err := l.sync(ctx, st); err != nil {
		return err
	}
	if version > st.version {
		return fmt.Errorf("save snapshot of %s at version %d: the stream is at version %d: %w",
			stream, version, st.version, eventlog.ErrWrongVersion)
	}
	m := nats.NewMsg(l.snapshotSubject(stream))
	m.Header.Set(hdrVersion, strconv.FormatUint(version, 10))
	m.Header.Set(hdrStream, stream)
	m.Data = data
	if size := int64(len(data)) + headerSize(m.Header) + int64(len(m.Subject)); size > l.nc.MaxPayload() {
		return bus.Errorf(bus.ReasonTooLarge, "save snapshot of %s: %d bytes, the servers' max_payload is %d; raise max_payload or keep smaller state", stream, size, l.nc.MaxPayload())
	}
	if _, err := l.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("save snapshot of %s at version %d: %w", stream, version, err)
	}
	return nil
}

// LoadSnapshot returns the latest snapshot of stream: an error wrapping
// eventlog.ErrNotFound when there is none, an *eventlog.CorruptError when
// its headers are damaged.
func (l *Log) LoadSnapshot(stream string) (eventlog.Snapshot, error) {
	if err := eventlog.ValidateStream(stream); err != nil {
		return eventlog.Snapshot{}, err
	}
	ctx, cancel := l.timeout()
	defer cancel()
	m, err := l.snaps.GetLastMsgForSubject(ctx, l.snapshotSubject(stream))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return eventlog.Snapshot{}, fmt.Errorf("snapshot of %s: %w", stream, eventlog.ErrNotFound)
	}
	if err != nil {
		return eventlog.Snapshot{}, fmt.Errorf("snapshot of %s: %w", stream, err)
	}
	v, err := strconv.ParseUint(m.Header.Get(hdrVersion), 10, 64)
	if err != nil || m.Header.Get(hdrStream) != stream {
		return eventlog.Snapshot{}, &eventlog.CorruptError{Stream: stream, Reason: fmt.Sprintf("snapshot message %d has no valid %s and %s headers", m.Sequence, hdrVersion, hdrStream)}
	}
	return eventlog.Snapshot{Stream: stream, Version: v, Data: m.Data}, nil
}

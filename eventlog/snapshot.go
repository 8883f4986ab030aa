package eventlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/cockroachdb/pebble/v2"
)

// Snapshot is a stream's derived state at a version, as saved by an agent
// or a projection so that it can restart without a full replay. The log
// treats Data as opaque bytes.
type Snapshot struct {
	Stream  string
	Version uint64 // the stream version the state includes
	Data    []byte // owned by the caller once returned
}

// snapshotFormatV1 values are: format(1) crc32c(4) version(8) data.
const snapshotFormatV1 = 1

// SaveSnapshot durably replaces the snapshot of stream with data at
// version, which must not be above the stream's version. The Log copies
// data; the caller may reuse it afterwards.
func (l *Log) SaveSnapshot(ctx context.Context, stream string, version uint64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateStream(stream); err != nil {
		return err
	}
	if err := l.enter(); err != nil {
		return err
	}
	defer l.leave()
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if err := l.failure(); err != nil {
		return err
	}
	m, _ := l.meta(stream)
	if version > m.head {
		return fmt.Errorf("save snapshot of %s at version %d: the stream is at version %d: %w",
			stream, version, m.head, ErrWrongVersion)
	}
	v := make([]byte, 13, 13+len(data))
	v[0] = snapshotFormatV1
	binary.BigEndian.PutUint64(v[5:], version)
	v = append(v, data...)
	binary.BigEndian.PutUint32(v[1:], crc32.Checksum(v[5:], castagnoli))
	if err := l.write(func() error { return l.db.Set(snapshotKey(stream), v, l.writeOpts) }); err != nil {
		return fmt.Errorf("save snapshot of %s at version %d: %w", stream, version, err)
	}
	return nil
}

// LoadSnapshot returns the latest snapshot of stream: an error wrapping
// ErrNotFound when there is none, a *CorruptError when it is damaged.
func (l *Log) LoadSnapshot(stream string) (Snapshot, error) {
	if err := ValidateStream(stream); err != nil {
		return Snapshot{}, err
	}
	if err := l.enter(); err != nil {
		return Snapshot{}, err
	}
	defer l.leave()
	v, closer, err := l.db.Get(snapshotKey(stream))
	if errors.Is(err, pebble.ErrNotFound) {
		return Snapshot{}, fmt.Errorf("snapshot of %s: %w", stream, ErrNotFound)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of %s: %w", stream, err)
	}
	defer closer.Close()
	if len(v) < 13 || v[0] != snapshotFormatV1 || crc32.Checksum(v[5:], castagnoli) != binary.BigEndian.Uint32(v[1:]) {
		return Snapshot{}, &CorruptError{Stream: stream, Reason: "snapshot fails its format or checksum check"}
	}
	return Snapshot{
		Stream:  stream,
		Version: binary.BigEndian.Uint64(v[5:]),
		Data:    append([]byte(nil), v[13:]...),
	}, nil
}

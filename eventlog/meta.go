package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// streamMeta is what the log keeps about a stream besides its entries.
type streamMeta struct {
	head  uint64 // the last sequence handed out (the version); 0 = no entries ever
	first uint64 // the first sequence retained; head+1 when all are truncated
	count uint64 // entries retained
	bytes uint64 // encoded bytes of the entries retained (one copy)
}

const metaFormatV1 = 1

func encodeMeta(m streamMeta) []byte { return appendMeta(make([]byte, 0, 33), m) }

func appendMeta(b []byte, m streamMeta) []byte {
	b = append(b, metaFormatV1)
	b = binary.BigEndian.AppendUint64(b, m.head)
	b = binary.BigEndian.AppendUint64(b, m.first)
	b = binary.BigEndian.AppendUint64(b, m.count)
	return binary.BigEndian.AppendUint64(b, m.bytes)
}

func decodeMeta(b []byte) (streamMeta, error) {
	if len(b) != 33 || b[0] != metaFormatV1 {
		return streamMeta{}, errors.New("metadata value has the wrong size or format")
	}
	return streamMeta{
		head:  binary.BigEndian.Uint64(b[1:]),
		first: binary.BigEndian.Uint64(b[9:]),
		count: binary.BigEndian.Uint64(b[17:]),
		bytes: binary.BigEndian.Uint64(b[25:]),
	}, nil
}

// StreamInfo describes a stream.
type StreamInfo struct {
	Stream string `json:"stream"`
	// Head is the stream's version: the sequence of its last entry ever
	// appended (truncation does not lower it).
	Head uint64 `json:"head"`
	// First is the first sequence still retained; Head+1 when every entry
	// was truncated.
	First uint64 `json:"first"`
	// Count is the number of entries retained.
	Count uint64 `json:"count"`
	// Bytes is the encoded size of the retained entries, in bytes (each
	// is stored once; the stream index adds 8 bytes per entry).
	Bytes uint64 `json:"bytes"`
}

func (m streamMeta) info(stream string) StreamInfo {
	return StreamInfo{Stream: stream, Head: m.head, First: m.first, Count: m.count, Bytes: m.bytes}
}

// Streams lists the streams whose name starts with prefix ("" for all),
// sorted by name. Head and counts include appends in flight whose fsync
// has not finished.
func (l *Log) Streams(prefix string) []StreamInfo {
	l.stateMu.RLock()
	out := make([]StreamInfo, 0, len(l.streams))
	for name, m := range l.streams {
		if strings.HasPrefix(name, prefix) {
			out = append(out, m.info(name))
		}
	}
	l.stateMu.RUnlock()
	slices.SortFunc(out, func(a, b StreamInfo) int { return strings.Compare(a.Stream, b.Stream) })
	return out
}

// Stream describes one stream; an unknown or deleted stream is an error
// wrapping ErrNotFound.
func (l *Log) Stream(stream string) (StreamInfo, error) {
	l.stateMu.RLock()
	m, ok := l.streams[stream]
	l.stateMu.RUnlock()
	if !ok {
		return StreamInfo{}, fmt.Errorf("stream %s: %w", stream, ErrNotFound)
	}
	return m.info(stream), nil
}

func (l *Log) meta(stream string) (streamMeta, bool) {
	l.stateMu.RLock()
	defer l.stateMu.RUnlock()
	m, ok := l.streams[stream]
	return m, ok
}

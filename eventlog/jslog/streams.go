package jslog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog"
)

// Listing the log's streams. The partition streams know their subjects
// (stream info with a subject filter, paged by the client library), so
// the names come from JetStream itself, not from an index of ours that
// could disagree with it. A listing therefore asks every partition for
// its subjects: its cost grows with the number of log streams, not with
// the page asked for. Each stream of a page then costs one read of its
// last message, whose header is the stream's version.

// StreamsPage is one page of Streams.
type StreamsPage struct {
	// Streams are sorted by name. Head is the stream's version, Count the
	// same (the replicated log is never truncated), First 1. Bytes is 0:
	// JetStream does not count a subject's bytes, and summing them would
	// read every message of every stream listed.
	Streams []eventlog.StreamInfo
	// Next is the After of the following page; empty when this is the
	// last.
	Next string
}

// Streams lists up to limit log streams whose name starts with prefix
// and sorts after after (from the first when empty), sorted by name. A
// limit of 0 or less means 1000. A subject that does not decode to a
// stream of its partition is not listed (Verify reports it).
func (l *Log) Streams(ctx context.Context, prefix, after string, limit int) (StreamsPage, error) {
	if limit <= 0 {
		limit = 1000
	}
	if prefix != "" && eventlog.ValidateStream(prefix+"x") != nil && eventlog.ValidateStream(prefix) != nil {
		// No stream's name starts with it (a client's probe for a served
		// log asks for one such): nothing to ask every partition for.
		return StreamsPage{Streams: []eventlog.StreamInfo{}}, nil
	}
	var names []string
	for p := range l.opts.Partitions {
		got, err := l.streamsOf(ctx, p, prefix)
		if err != nil {
			return StreamsPage{}, err
		}
		for _, name := range got {
			if name > after {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	page := StreamsPage{}
	if len(names) > limit {
		names = names[:limit]
		page.Next = names[limit-1]
	}
	page.Streams = make([]eventlog.StreamInfo, 0, len(names))
	for _, name := range names {
		info, err := l.head(ctx, name)
		if errors.Is(err, eventlog.ErrNotFound) {
			continue // its subject emptied since it was listed
		}
		if err != nil {
			return StreamsPage{}, err
		}
		page.Streams = append(page.Streams, info)
	}
	return page, nil
}

// streamsOf lists the log streams whose messages partition p holds and
// whose name starts with prefix.
func (l *Log) streamsOf(ctx context.Context, p int, prefix string) ([]string, error) {
	base := l.opts.Prefix + ".log." + strconv.Itoa(p) + "."
	// The segments of prefix that are whole (and valid: nothing else may
	// reach a subject filter) narrow the filter on the server; a last,
	// partial one is matched here.
	filter := base + ">"
	if i := strings.LastIndexByte(prefix, '/'); i > 0 && eventlog.ValidateStream(prefix[:i]) == nil {
		filter = base + subjectTokens(prefix[:i]) + ".>"
	}
	info, err := l.parts[p].Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("list the subjects of stream %s: %w", l.partitionStreamName(p), err)
	}
	var out []string
	for subject := range info.State.Subjects {
		name, ok := streamOfSubject(strings.TrimPrefix(subject, base))
		if ok && strings.HasPrefix(name, prefix) && Partition(name, l.opts.Partitions) == p {
			out = append(out, name)
		}
	}
	return out, nil
}

// streamOfSubject decodes the tokens after "<prefix>.log.<n>." back into
// a stream name (subjectTokens reversed); ok is false when they are not
// a valid stream name's encoding.
func streamOfSubject(tokens string) (string, bool) {
	var b strings.Builder
	b.Grow(len(tokens))
	for i := 0; i < len(tokens); i++ {
		switch c := tokens[i]; c {
		case '.':
			b.WriteByte('/')
		case '~':
			b.WriteByte('.')
		case '/':
			return "", false // '/' never appears in an encoded name
		default:
			b.WriteByte(c)
		}
	}
	name := b.String()
	if eventlog.ValidateStream(name) != nil || subjectTokens(name) != tokens {
		return "", false
	}
	return name, true
}

// head describes stream from its last message, read from the partition
// stream's leader: an error wrapping eventlog.ErrNotFound when the
// stream has no message, an *eventlog.CorruptError when the message's
// headers are damaged.
func (l *Log) head(ctx context.Context, stream string) (eventlog.StreamInfo, error) {
	p := Partition(stream, l.opts.Partitions)
	m, err := l.parts[p].GetLastMsgForSubject(ctx, l.logSubject(stream, p))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return eventlog.StreamInfo{}, fmt.Errorf("stream %s: %w", stream, eventlog.ErrNotFound)
	}
	if err != nil {
		return eventlog.StreamInfo{}, fmt.Errorf("stream %s: %w", stream, err)
	}
	h, err := readHeader(m)
	if err != nil {
		return eventlog.StreamInfo{}, &eventlog.CorruptError{Stream: stream, GlobalSeq: m.Sequence, Reason: err.Error()}
	}
	first := uint64(1)
	if h.first() > 1 {
		// Perhaps truncated: the first entry is the first message's.
		fm, err := l.parts[p].GetMsg(ctx, 1, jetstream.WithGetMsgSubject(l.logSubject(stream, p)))
		if err != nil {
			return eventlog.StreamInfo{}, fmt.Errorf("stream %s: %w", stream, err)
		}
		fh, err := readHeader(fm)
		if err != nil {
			return eventlog.StreamInfo{}, &eventlog.CorruptError{Stream: stream, GlobalSeq: fm.Sequence, Reason: err.Error()}
		}
		first = fh.first()
	}
	return eventlog.StreamInfo{Stream: stream, Head: h.version, First: first, Count: h.version - first + 1}, nil
}

// Stream describes one log stream (as Streams does): an error wrapping
// eventlog.ErrNotFound when it has no entry.
func (l *Log) Stream(stream string) (eventlog.StreamInfo, error) {
	if err := eventlog.ValidateStream(stream); err != nil {
		return eventlog.StreamInfo{}, err
	}
	ctx, cancel := l.timeout()
	defer cancel()
	return l.head(ctx, stream)
}

package jslog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Headers of a log message.
const (
	hdrVersion = "Jido-Version" // the stream's version after the message
	hdrEvents  = "Jido-Events"  // how many events the message holds
	hdrStream  = "Jido-Stream"  // the log stream's name, as given
)

// msgHeader is what a message's headers say of its place in the stream.
type msgHeader struct {
	version uint64
	events  uint64
}

func (h msgHeader) first() uint64 { return h.version - h.events + 1 }

func readHeader(m *jetstream.RawStreamMsg) (msgHeader, error) {
	v, err := strconv.ParseUint(m.Header.Get(hdrVersion), 10, 64)
	if err != nil {
		return msgHeader{}, fmt.Errorf("header %s: %w", hdrVersion, err)
	}
	n, err := strconv.ParseUint(m.Header.Get(hdrEvents), 10, 64)
	if err != nil || n == 0 || n > v {
		return msgHeader{}, fmt.Errorf("header %s is %q with %s %d", hdrEvents, m.Header.Get(hdrEvents), hdrVersion, v)
	}
	return msgHeader{version: v, events: n}, nil
}

// eventRef is the identity of one event of a message.
type eventRef struct {
	ID     string `json:"id"`
	Source string `json:"source"`
}

// decodeRefs reads a message's header and the identity of its events.
func decodeRefs(m *jetstream.RawStreamMsg) (msgHeader, []eventRef, error) {
	h, err := readHeader(m)
	if err != nil {
		return h, nil, err
	}
	var refs []eventRef
	if err := json.Unmarshal(m.Data, &refs); err != nil {
		return h, nil, fmt.Errorf("body: %w", err)
	}
	if uint64(len(refs)) != h.events {
		return h, nil, fmt.Errorf("body holds %d events, header %s says %d", len(refs), hdrEvents, h.events)
	}
	return h, refs, nil
}

// encodeEvents is a message body: the events as a JSON array of structured
// CloudEvents.
func encodeEvents(events []bus.Signal) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range events {
		if i > 0 {
			b.WriteByte(',')
		}
		j, err := json.Marshal(&events[i])
		if err != nil {
			return nil, fmt.Errorf("event %d (id %q): %w", i, events[i].ID(), err)
		}
		b.Write(j)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// decodeEntries reads the entries of one message of stream.
func decodeEntries(stream string, m *jetstream.RawStreamMsg) ([]eventlog.Entry, error) {
	h, err := readHeader(m)
	if err != nil {
		return nil, &eventlog.CorruptError{Stream: stream, GlobalSeq: m.Sequence, Reason: err.Error()}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m.Data, &raws); err != nil || uint64(len(raws)) != h.events {
		reason := fmt.Sprintf("body holds %d events, header %s says %d", len(raws), hdrEvents, h.events)
		if err != nil {
			reason = "body: " + err.Error()
		}
		return nil, &eventlog.CorruptError{Stream: stream, Seq: h.first(), GlobalSeq: m.Sequence, Reason: reason}
	}
	out := make([]eventlog.Entry, len(raws))
	for i, raw := range raws {
		e := eventlog.Entry{Stream: stream, Seq: h.first() + uint64(i), GlobalSeq: m.Sequence, Time: m.Time.UTC(), Size: len(raw)}
		if err := json.Unmarshal(raw, &e.Event); err != nil {
			return nil, &eventlog.CorruptError{Stream: stream, Seq: e.Seq, GlobalSeq: m.Sequence, Reason: "event: " + err.Error()}
		}
		out[i] = e
	}
	return out, nil
}

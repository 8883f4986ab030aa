package codec

import (
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Message is a NATS message that signals are encoded into again and
// again: its header map, the array its header values share and the
// message itself are kept from one signal to the next, where Encode makes
// each anew. Every signal an agent emits is encoded and published once, so
// these were most of the emit path's allocations (a 14-header map alone
// is two, and 14 one-string slices or one array): measured by
// BenchmarkRuntimeEmit in bus/dispatch.
//
// Use one Message per goroutine at a time: EncodeInto, add headers with
// Set, publish Msg, then Reset (or EncodeInto the next signal) once the
// publish returned — nats.Conn.PublishMsg copies the message into the
// connection's buffer before it returns, and keeps nothing. Msg shares
// the signal's data bytes in binary mode, as Encode's message does.
type Message struct {
	Msg  nats.Msg
	vals []string // backs the header values, one capped slice each
}

// maxKeptHeaders bounds the headers a Message keeps room for between
// signals, so that one signal with many extensions does not keep a large
// map and array alive in a pool.
const maxKeptHeaders = 64

// EncodeInto encodes s into m on subject, as Encode does, replacing what
// m held. The headers and body are those Encode writes, byte for byte.
func (m *Message) EncodeInto(subject string, s *bus.Signal, mode Mode) error {
	m.Reset()
	m.Msg.Subject = subject
	return encode(m, s, mode)
}

// Reset empties m, keeping its map and array, and lets go of the last
// signal's data.
func (m *Message) Reset() {
	switch {
	case m.Msg.Header == nil || len(m.Msg.Header) > maxKeptHeaders:
		// A map that grew for a signal with many extensions is let go,
		// as clear would keep its size.
		m.Msg.Header = make(nats.Header, 16)
	default:
		clear(m.Msg.Header)
	}
	if cap(m.vals) > maxKeptHeaders {
		m.vals = nil
	}
	clear(m.vals)
	m.vals = m.vals[:0]
	m.Msg = nats.Msg{Header: m.Msg.Header}
}

// Set sets the header name to the one value v, replacing any value it
// had. The value shares m's array: capped, so an append to it by a
// reader cannot run into the next.
func (m *Message) Set(name, v string) {
	if m.Msg.Header == nil {
		m.Msg.Header = make(nats.Header, 16)
	}
	m.vals = append(m.vals, v)
	n := len(m.vals)
	m.Msg.Header[name] = m.vals[n-1 : n : n]
}

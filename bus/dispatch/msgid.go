package dispatch

import (
	"strconv"

	"github.com/jido-bus/jido-bus/bus"
)

// HeaderMsgID is JetStream's deduplication header: a stream that captures
// a message stores it once per value within its duplicate window.
const HeaderMsgID = "Nats-Msg-Id"

// MsgID is the Nats-Msg-Id of an emitted signal: its source and its id,
// quoted. A CloudEvent is unique by the two together, not by its id: two
// agents that answer the same broadcast derive the same ids for what they
// emit (agents.OriginKey is a function of the input alone), and differ by
// their sources. The same emit published again after a crash has the same
// source and id, hence the same MsgID.
func MsgID(s *bus.Signal) string {
	return string(appendMsgID(nil, s))
}

// appendMsgID appends MsgID(s) to dst.
func appendMsgID(dst []byte, s *bus.Signal) []byte {
	dst = appendQuoted(dst, bus.SourceString(s))
	dst = append(dst, ' ')
	return appendQuoted(dst, s.ID())
}

// appendQuoted appends strconv.Quote(v) to dst. Sources and ids are
// nearly always printable ASCII without '"' or '\\', which Quote writes
// as they are between quotes; strconv decodes rune by rune to find that
// out (8% of an emit's Dispatch in BenchmarkRuntimeEmit's profile).
func appendQuoted(dst []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.AppendQuote(dst, v)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, v...)
	return append(dst, '"')
}

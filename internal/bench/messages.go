package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// minData is the smallest data a counter increment carries.
const minData = `{"by":1}`

// counterData returns {"by":1} padded with JSON whitespace to size bytes:
// the counter's params schema allows no other member, and whitespace keeps
// the payload valid JSON of the size asked for.
func counterData(size int) []byte {
	b := make([]byte, 0, size)
	b = append(b, minData[:len(minData)-1]...)
	for len(b) < size-1 {
		b = append(b, ' ')
	}
	return append(b, '}')
}

// messages builds the counter.increment signals of a run as NATS messages
// in the CloudEvents binary mode, the way any client would send them: the
// headers of one encoded signal serve as a template and each message gets
// its own ce-id, so the log's idempotency sees distinct signals.
type messages struct {
	header nats.Header
	data   []byte
	prefix string // of every ce-id
}

func newMessages(size int, source, run string) (*messages, error) {
	data := counterData(size)
	sig, err := bus.NewSignal(builtin.CounterIncrement, source, json.RawMessage(data))
	if err != nil {
		return nil, fmt.Errorf("build a counter signal: %w", err)
	}
	msg, err := codec.Encode("template", &sig, codec.Binary)
	if err != nil {
		return nil, fmt.Errorf("encode a counter signal: %w", err)
	}
	return &messages{header: msg.Header, data: data, prefix: run + "-"}, nil
}

// msg returns message i (of publisher pub) on subject.
func (m *messages) msg(subject string, pub, i int) *nats.Msg {
	h := make(nats.Header, len(m.header))
	for k, v := range m.header {
		h[k] = v
	}
	h["ce-id"] = []string{m.id(pub, i)}
	return &nats.Msg{Subject: subject, Header: h, Data: m.data}
}

func (m *messages) id(pub, i int) string {
	b := make([]byte, 0, len(m.prefix)+16)
	b = append(b, m.prefix...)
	b = strconv.AppendInt(b, int64(pub), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(i), 10)
	return string(b)
}

// wire returns the bytes a message carries besides its subject: the NATS
// header block as the protocol writes it, then the data. The raw Pebble
// baseline writes values of exactly this size.
func (m *messages) wire() []byte {
	var b bytes.Buffer
	b.WriteString("NATS/1.0\r\n")
	keys := make([]string, 0, len(m.header))
	for k := range m.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.Join(m.header[k], ",")
		if k == "ce-id" {
			v = m.id(0, 0)
		}
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(m.data)
	return b.Bytes()
}

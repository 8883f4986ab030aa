package natsbus

import (
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// BenchmarkBusDecode measures decoding one inbound message into a signal
// as a Bus does for every cast it receives (Bus.Decode: the subject, then
// the codec), in both modes. The message is a counter cast as a client
// sends it (`jido-bus bench` sends these: binary, 128-byte data), its
// headers read back through nats.go's own header parser so that they are
// what a subscription hands over. The allocations per op are the inbound
// budget per signal.
func BenchmarkBusDecode(b *testing.B) {
	sig := event.New(bus.SpecVersion)
	sig.SetID("bench-run-3-41234")
	sig.SetSource("/bench/pub-3")
	sig.SetType("counter.increment")
	sig.SetTime(time.Date(2026, 11, 28, 1, 2, 3, 456_789_012, time.UTC))
	data := []byte(`{"by":1`)
	for len(data) < 127 {
		data = append(data, ' ')
	}
	if err := bus.SetJSONData(&sig, append(data, '}')); err != nil {
		b.Fatal(err)
	}
	// The same cast as an agent's answer carries it: its causation and
	// correlation.
	ext := sig.Clone()
	ext.SetExtension(bus.ExtCausationID, "01JDQ7ZV3M6Y2S3QK0F5N8C9TB")
	ext.SetExtension(bus.ExtCorrelationID, "conv-7")
	bs := New(nil, Options{})
	const subject = "jido.agent.counter-17.counter.increment"
	for _, c := range []struct {
		name string
		sig  *bus.Signal
		mode codec.Mode
	}{{"binary", &sig, codec.Binary}, {"binary_extensions", &ext, codec.Binary}, {"structured", &sig, codec.Structured}} {
		b.Run(c.name, func(b *testing.B) {
			msg, err := codec.Encode(subject, c.sig, c.mode)
			if err != nil {
				b.Fatal(err)
			}
			msg.Header = wireHeader(b, msg)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bs.Decode(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// wireHeader returns msg's headers as a subscriber gets them: written in
// the protocol's form and parsed back by nats.go.
func wireHeader(b *testing.B, msg *nats.Msg) nats.Header {
	b.Helper()
	raw := "NATS/1.0\r\n"
	for k, vs := range msg.Header {
		for _, v := range vs {
			raw += k + ": " + v + "\r\n"
		}
	}
	h, err := nats.DecodeHeadersMsg([]byte(raw + "\r\n"))
	if err != nil {
		b.Fatal(err)
	}
	return h
}

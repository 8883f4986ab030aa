package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/jido-bus/jido-bus/bus"
)

// BenchmarkRuntimeEmit measures one emit as the agent runtime publishes
// it (agents/runtime execEmit): the default nats target, the agent's own
// emit subject, a Position in the context, and a signal shaped as a
// counter's answer to a cast (an id derived from its input's, the agent's
// source, its input as causation, the decision's time, JSON data), its
// position in a context derived for it as execEmit derives one. The
// allocations per op are the emit path's budget per signal; the embedded
// server takes what is published, flushed at the end.
func BenchmarkRuntimeEmit(b *testing.B) {
	nc := runNATS(b)
	sig := event.New(bus.SpecVersion)
	sig.SetID("01JDQ7ZV3M6Y2S3QK0F5N8C9TB.0")
	sig.SetSource("/agent/counter-17")
	sig.SetType("counter.changed")
	sig.SetTime(time.Date(2026, 11, 28, 1, 2, 3, 456_789_012, time.UTC))
	sig.SetExtension(bus.ExtCausationID, "01JDQ7ZV3M6Y2S3QK0F5N8C9TB")
	if err := bus.SetJSONData(&sig, map[string]int{"count": 3}); err != nil {
		b.Fatal(err)
	}
	pos := Position{Stream: "agent/counter-17", Seq: 4242, GlobalSeq: 1234567, Index: 0}
	for _, mode := range []string{ModeBinary, ModeStructured} {
		b.Run(mode, func(b *testing.B) {
			d, err := New(Config{Mode: mode}, Env{Conn: nc})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Dispatch(WithPosition(context.Background(), pos), "counter-17", &sig); err != nil {
					b.Fatal(err)
				}
			}
			if err := nc.Flush(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

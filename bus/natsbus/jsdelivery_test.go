package natsbus

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestStreamDeliveryIsRefusedOnceAndItsConsumerDeleted: a client that may
// create consumers on a stream (a client reading the emit stream) made a
// push consumer deliver every stored message into the node's API subject
// in the node's queue group; each was refused and dead-lettered, so one
// request filled the log with dead letters. Now the first delivery is
// refused with one dead letter naming the consumer, the consumer is
// deleted, and no handler runs.
func TestStreamDeliveryIsRefusedOnceAndItsConsumerDeleted(t *testing.T) {
	f := newFixture(t, Options{})
	var served atomic.Int32
	if err := f.bus.HandleAPI("jido.api.x.get", func(context.Context, []byte) (any, error) {
		served.Add(1)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	js, err := jetstream.New(f.client)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EMITS", Subjects: []string{"emit.>"}}); err != nil {
		t.Fatal(err)
	}
	const stored = 200
	for i := range stored {
		if _, err := js.Publish(ctx, "emit.c1.x", []byte(`{"n":`+strconv.Itoa(i)+`}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, deliver, group string }{
		{"into-the-api", "jido.api.x.get", DefaultQueueGroup}, // the node's queue group
		{"into-the-api-too", "jido.api.x.get", DefaultQueueGroup},
	} {
		if _, err := js.CreatePushConsumer(ctx, "EMITS", jetstream.ConsumerConfig{
			Durable: c.name, DeliverSubject: c.deliver, DeliverGroup: c.group, AckPolicy: jetstream.AckExplicitPolicy,
		}); err != nil {
			t.Fatal(err)
		}
	}
	filed := f.awaitFiled(t, 2)
	for _, name := range []string{"into-the-api", "into-the-api-too"} {
		testkit.Eventually(t, "consumer "+name+" deleted", func() bool {
			_, err := js.Consumer(ctx, "EMITS", name)
			return errors.Is(err, jetstream.ErrConsumerNotFound)
		})
	}
	for _, d := range filed {
		if d.Reason != bus.ReasonForbidden || !strings.Contains(d.Error, "consumer into-the-api") || !strings.Contains(d.Error, "deleted") {
			t.Errorf("dead letter %q: %s", d.Reason, d.Error)
		}
	}
	f.mu.Lock()
	got := len(f.filed)
	f.mu.Unlock()
	if got != 2 {
		t.Errorf("%d dead letters for two consumers' %d deliveries, want one each", got, stored)
	}
	// Made again under the same name, it is refused and deleted again:
	// a name once refused does not turn the next flood silent.
	if _, err := js.CreatePushConsumer(ctx, "EMITS", jetstream.ConsumerConfig{
		Durable: "into-the-api", DeliverSubject: "jido.api.x.get", DeliverGroup: DefaultQueueGroup, AckPolicy: jetstream.AckExplicitPolicy,
	}); err != nil {
		t.Fatal(err)
	}
	f.awaitFiled(t, 3)
	testkit.Eventually(t, "the consumer made again deleted", func() bool {
		_, err := js.Consumer(ctx, "EMITS", "into-the-api")
		return errors.Is(err, jetstream.ErrConsumerNotFound)
	})
	if n := served.Load(); n != 0 {
		t.Errorf("%d deliveries from a stream reached a handler", n)
	}
}

package natsbus

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
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
	js := emitsStream(t, f)
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
	recreate(t, js, "EMITS", jetstream.ConsumerConfig{
		Durable: "into-the-api", DeliverSubject: "jido.api.x.get", DeliverGroup: DefaultQueueGroup, AckPolicy: jetstream.AckExplicitPolicy,
	})
	f.awaitFiled(t, 3)
	testkit.Eventually(t, "the consumer made again deleted", func() bool {
		_, err := js.Consumer(ctx, "EMITS", "into-the-api")
		return errors.Is(err, jetstream.ErrConsumerNotFound)
	})
	if n := served.Load(); n != 0 {
		t.Errorf("%d deliveries from a stream reached a handler", n)
	}
}

// TestStreamConsumerMadeAgainIsRefusedWithoutItsFirstDelivery: a consumer
// made again under the name of one the node refused and deleted is
// another flood, which the node knows by its first delivery (consumer
// sequence 1, delivered once). When that delivery does not reach the
// node — the server counts it delivered and sends it again only after the
// ack wait — a later delivery of the name, once the delete has finished,
// asks for another delete; that one finds the new consumer, which gets
// its own dead letter. Before, every delivery of a refused name but its
// first was dropped silently, and the new consumer went on redelivering
// forever (CI, under load: the third dead letter of the test above never
// came). Here the new consumer's first delivery goes where only the test
// listens; then its deliver subject is moved into the node's.
func TestStreamConsumerMadeAgainIsRefusedWithoutItsFirstDelivery(t *testing.T) {
	logs := &testkit.Buffer{}
	f := newFixture(t, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	defer func() {
		if t.Failed() {
			t.Logf("the bus logged:\n%s", logs)
		}
	}()
	f.bus.jsConsumers.again = time.Nanosecond // the test waits for events, not for the second
	if err := f.bus.HandleAPI("jido.api.x.get", func(context.Context, []byte) (any, error) {
		t.Error("a stream's delivery reached the handler")
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	js := emitsStream(t, f)
	if _, err := js.Publish(ctx, "emit.c1.x", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	// The consumer made again is sent its lost delivery again soon; the
	// first one never (nothing of it may be on its way later).
	consumer := func(deliver string, ackWait time.Duration) jetstream.ConsumerConfig {
		return jetstream.ConsumerConfig{Durable: "again", DeliverSubject: deliver, DeliverGroup: DefaultQueueGroup,
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait}
	}
	gone := func(what string) {
		t.Helper()
		testkit.Eventually(t, what, func() bool {
			_, err := js.Consumer(ctx, "EMITS", "again")
			return errors.Is(err, jetstream.ErrConsumerNotFound)
		})
	}

	if _, err := js.CreatePushConsumer(ctx, "EMITS", consumer("jido.api.x.get", time.Hour)); err != nil {
		t.Fatal(err)
	}
	f.awaitFiled(t, 1)
	gone("the refused consumer deleted")

	// Made again: its first delivery reaches only the test.
	lost := make(chan *nats.Msg, 8)
	sub, err := f.client.ChanQueueSubscribe("elsewhere", DefaultQueueGroup, lost)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	recreate(t, js, "EMITS", consumer("elsewhere", 100*time.Millisecond))
	select {
	case <-lost:
	case <-time.After(time.Minute):
		t.Fatal("the consumer made again delivered nothing")
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	// The redelivery into the node can come, and the node delete the
	// consumer, before the server has finished the update: it may answer
	// with an error then ("consumer closed"). The dead letter below is
	// what says whether the update took.
	if _, err := js.UpdatePushConsumer(ctx, "EMITS", consumer("jido.api.x.get", 100*time.Millisecond)); err != nil {
		t.Logf("the update: %v", err)
	}
	filed := f.awaitFiled(t, 2)
	gone("the consumer made again deleted")
	if d := filed[1]; d.Reason != bus.ReasonForbidden || !strings.Contains(d.Error, "made again under the name") {
		t.Errorf("the second dead letter: %s %s", d.Reason, d.Error)
	}
}

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		filter, subject string
		want            bool
	}{
		{"jido.api.x.get", "jido.api.x.get", true},
		{"jido.api.x.get", "jido.api.x", false},
		{"jido.api.x", "jido.api.x.get", false},
		{"jido.agent.>", "jido.agent.c1.counter.increment", true},
		{"jido.agent.>", "jido.agent", false},
		{"jido.*.x", "jido.api.x", true},
		{"jido.*.x", "jido.api.y", false},
		{"jido.*", "jido.api.x", false},
		{">", "anything.at.all", true},
		{"", "jido.api.x", false},
	} {
		if got := subjectMatches(c.filter, c.subject); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", c.filter, c.subject, got, c.want)
		}
	}
}

// recreate makes a consumer under the name of one just deleted, asking
// again while the server is not done with the deleted one (under load it
// answered "consumer does not exist" to a create).
func recreate(t *testing.T, js jetstream.JetStream, stream string, cfg jetstream.ConsumerConfig) {
	t.Helper()
	var last error
	testkit.Eventually(t, "consumer "+cfg.Durable+" made again", func() bool {
		_, last = js.CreatePushConsumer(context.Background(), stream, cfg)
		return last == nil
	})
}

// emitsStream makes stream EMITS (subjects emit.>) on f's server and
// returns the client's JetStream. In memory: the server removes a
// deleted file-backed consumer's directory in the background, and under
// load that took the files of the consumer made again under its name.
func emitsStream(t *testing.T, f *fixture) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(f.client)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "EMITS", Subjects: []string{"emit.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	return js
}

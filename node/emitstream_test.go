package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// emitStreamCfg starts nodes on dir with the emit stream es.
func emitStreamCfg(dir string, es emitstream.Config) Config {
	return Config{DataDir: dir, NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true, EmitStream: es}
}

func startNodeWith(t *testing.T, cfg Config) *Node {
	t.Helper()
	n, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	return n
}

func streamOf(t *testing.T, nc *nats.Conn, name string) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return s
}

// readAll reads every message the stream holds, in order, with an
// ordered consumer of its own.
func readAll(t *testing.T, s jetstream.Stream) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for uint64(len(out)) < info.State.Msgs {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(out), info.State.Msgs, err)
		}
		out = append(out, m)
	}
	return out
}

// TestEmitStreamKeepsEmits: a node makes the stream JIDO_EMITS with the
// default limits, and what an agent emits is in it in order, each
// message with its Nats-Msg-Id and its position headers.
func TestEmitStreamKeepsEmits(t *testing.T) {
	n := startNodeWith(t, emitStreamCfg(t.TempDir(), emitstream.Config{On: true}))
	if n.EmitStream() != "JIDO_EMITS" {
		t.Fatalf("EmitStream() = %q, want JIDO_EMITS", n.EmitStream())
	}
	s := streamOf(t, n.Conn(), "JIDO_EMITS")
	cfg := s.CachedInfo().Config
	if cfg.MaxAge != emitstream.DefaultMaxAge || cfg.MaxBytes != emitstream.DefaultMaxBytes || cfg.Storage != jetstream.FileStorage ||
		cfg.Retention != jetstream.LimitsPolicy || cfg.Discard != jetstream.DiscardOld || len(cfg.Subjects) != 1 || cfg.Subjects[0] != "jido.emit.>" ||
		cfg.Duplicates != emitstream.DuplicateWindow || !cfg.DenyDelete || !cfg.DenyPurge || cfg.Replicas != 1 {
		t.Fatalf("stream config %+v", cfg)
	}
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		body := []byte(`{"by":1}`)
		if _, err := n.Conn().Request("jido.agent.c1.counter.increment", body, 5*time.Second); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// The third emit is published after its call is answered: wait for it.
	waitStreamMsgs(t, s, 4)
	msgs := readAll(t, s)
	wantTypes := []string{"jido.agent.started", "counter.changed", "counter.changed", "counter.changed"}
	if len(msgs) != len(wantTypes) {
		t.Fatalf("%d messages, want %d", len(msgs), len(wantTypes))
	}
	var lastSeq uint64
	for i, m := range msgs {
		h := m.Headers()
		if got := h.Get("ce-type"); got != wantTypes[i] {
			t.Errorf("message %d: type %q, want %q", i, got, wantTypes[i])
		}
		wantID := fmt.Sprintf("%q %q", h.Get("ce-source"), h.Get("ce-id"))
		if got := h.Get(dispatch.HeaderMsgID); got != wantID {
			t.Errorf("message %d: %s %q, want %q", i, dispatch.HeaderMsgID, got, wantID)
		}
		if i == 0 {
			continue // a lifecycle signal has no position
		}
		var seq uint64
		if _, err := fmt.Sscan(h.Get(dispatch.HeaderSeq), &seq); err != nil || seq <= lastSeq {
			t.Errorf("message %d: %s %q after %d", i, dispatch.HeaderSeq, h.Get(dispatch.HeaderSeq), lastSeq)
		}
		lastSeq = seq
	}
}

func waitStreamMsgs(t *testing.T, s jetstream.Stream, want uint64) {
	t.Helper()
	testkit.EventuallyNil(t, fmt.Sprintf("the stream to hold %d messages", want), func() error {
		info, err := s.Info(context.Background())
		if err != nil {
			return err
		}
		if info.State.Msgs < want {
			return fmt.Errorf("it holds %d", info.State.Msgs)
		}
		return nil
	})
}

// TestEmitStreamStoresARepublishOnce: the same emit published again (as
// recovery does after a crash) is stored once; two agents that answer one
// broadcast emit signals with the same id and are both stored.
func TestEmitStreamStoresARepublishOnce(t *testing.T) {
	n := startNodeWith(t, emitStreamCfg(t.TempDir(), emitstream.Config{On: true}))
	s := streamOf(t, n.Conn(), n.EmitStream())
	d, err := dispatch.New(dispatch.Config{}, dispatch.Env{Conn: n.Conn(), Subjects: bus.Subjects{}})
	if err != nil {
		t.Fatal(err)
	}
	emit := func(agent string) {
		sig, err := bus.NewSignal("counter.changed", "/agent/"+agent, map[string]int{"count": 1})
		if err != nil {
			t.Fatal(err)
		}
		sig.SetID("in-1~x.0") // what both agents derive from one broadcast
		ctx := dispatch.WithPosition(context.Background(), dispatch.Position{Stream: "agent/" + agent, Seq: 3, GlobalSeq: 7})
		if err := d.Dispatch(ctx, agent, &sig); err != nil {
			t.Fatal(err)
		}
	}
	emit("a")
	emit("a") // the re-run's copy
	emit("b")
	if err := n.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	// A marker published after the three: once it is stored, so are they
	// (the stream stores what one connection sends in order).
	if _, err := jetstreamOf(t, n.Conn()).Publish(context.Background(), "jido.emit.marker.done", nil); err != nil {
		t.Fatal(err)
	}
	msgs := readAll(t, s)
	var from []string
	for _, m := range msgs[:len(msgs)-1] {
		from = append(from, m.Headers().Get("ce-source"))
	}
	if fmt.Sprint(from) != "[/agent/a /agent/b]" {
		t.Fatalf("stored the emits of %v, want [/agent/a /agent/b]", from)
	}
}

func jetstreamOf(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestEmitStreamSettings: the limits given are the stream's, a restart
// with others updates it, and settings that cannot bound it are refused.
func TestEmitStreamSettings(t *testing.T) {
	dir := t.TempDir()
	n, err := Start(context.Background(), emitStreamCfg(dir, emitstream.Config{On: true, MaxAge: time.Hour, MaxBytes: 64 << 20}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := streamOf(t, n.Conn(), "JIDO_EMITS").CachedInfo().Config
	if cfg.MaxAge != time.Hour || cfg.MaxBytes != 64<<20 {
		t.Fatalf("max age %s, max bytes %d; want 1h, 64MiB", cfg.MaxAge, cfg.MaxBytes)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	n = startNodeWith(t, emitStreamCfg(dir, emitstream.Config{On: true, MaxAge: emitstream.NoAgeLimit, MaxBytes: 32 << 20}))
	cfg = streamOf(t, n.Conn(), "JIDO_EMITS").CachedInfo().Config
	if cfg.MaxAge != 0 || cfg.MaxBytes != 32<<20 {
		t.Fatalf("after a restart: max age %s, max bytes %d; want none, 32MiB", cfg.MaxAge, cfg.MaxBytes)
	}
	for _, bad := range []emitstream.Config{{On: true, MaxBytes: 1000}, {On: true, MaxAge: time.Millisecond}} {
		if _, err := Start(context.Background(), emitStreamCfg(t.TempDir(), bad)); err == nil {
			t.Errorf("%+v: started", bad)
		}
	}
}

// TestEmitStreamOff: a node not told to keep emits makes no stream; one
// under --prefix acme.jido keeps them in a stream of its own.
func TestEmitStreamOff(t *testing.T) {
	n := startNodeWith(t, emitStreamCfg(t.TempDir(), emitstream.Config{}))
	if n.EmitStream() != "" {
		t.Fatalf("EmitStream() = %q with the stream off", n.EmitStream())
	}
	if _, err := jetstreamOf(t, n.Conn()).Stream(context.Background(), "JIDO_EMITS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("stream JIDO_EMITS with the stream off: %v", err)
	}
	cfg := emitStreamCfg(t.TempDir(), emitstream.Config{On: true})
	cfg.Prefix = "acme.jido"
	p := startNodeWith(t, cfg)
	if got := streamOf(t, p.Conn(), "ACME_JIDO_EMITS").CachedInfo().Config.Subjects; fmt.Sprint(got) != "[acme.jido.emit.>]" {
		t.Fatalf("ACME_JIDO_EMITS keeps %v", got)
	}
}

// TestEmitStreamConflict: a stream named JIDO_EMITS that keeps other
// subjects, or another stream that captures the emit subjects, is left as
// it is and the node refuses to start, naming it and what to do.
func TestEmitStreamConflict(t *testing.T) {
	cases := []struct {
		name string
		cfg  jetstream.StreamConfig
	}{
		{"same name, other subjects", jetstream.StreamConfig{Name: "JIDO_EMITS", Subjects: []string{"orders.>"}, Storage: jetstream.FileStorage}},
		{"same name, interest", jetstream.StreamConfig{Name: "JIDO_EMITS", Subjects: []string{"jido.emit.>"}, Storage: jetstream.FileStorage, Retention: jetstream.InterestPolicy}},
		{"same name, work queue", jetstream.StreamConfig{Name: "JIDO_EMITS", Subjects: []string{"jido.emit.>"}, Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy}},
		{"other name, same subjects", jetstream.StreamConfig{Name: "MINE", Subjects: []string{"jido.emit.c1.>"}, Storage: jetstream.FileStorage}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			n, err := Start(context.Background(), emitStreamCfg(dir, emitstream.Config{}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := jetstreamOf(t, n.Conn()).CreateStream(context.Background(), tc.cfg); err != nil {
				t.Fatal(err)
			}
			if err := n.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, err = Start(context.Background(), emitStreamCfg(dir, emitstream.Config{On: true}))
			if !errors.Is(err, emitstream.ErrConflict) {
				t.Fatalf("start: %v, want emitstream.ErrConflict", err)
			}
			t.Log(err)
			// Left as it was.
			n = startNodeWith(t, emitStreamCfg(dir, emitstream.Config{}))
			got := streamOf(t, n.Conn(), tc.cfg.Name).CachedInfo().Config
			if fmt.Sprint(got.Subjects) != fmt.Sprint(tc.cfg.Subjects) || got.Storage != tc.cfg.Storage {
				t.Fatalf("the stream was changed: %+v", got)
			}
		})
	}
}

// TestEmitStreamDeltasExpire: an assistant delta reaches the stream with
// Nats-TTL, so the stream drops it after emitstream.DeltaTTL and deltas never crowd
// committed emits out of its limits; without the stream it carries none.
func TestEmitStreamDeltasExpire(t *testing.T) {
	n := startNodeWith(t, emitStreamCfg(t.TempDir(), emitstream.Config{On: true}))
	s := streamOf(t, n.Conn(), n.EmitStream())
	delta, err := bus.NewSignal("conversation.assistant.delta", "/conversation/p/c1", map[string]string{"text": "He"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.publishTransient("p/c1", delta); err != nil {
		t.Fatal(err)
	}
	waitStreamMsgs(t, s, 1)
	m := readAll(t, s)[0]
	if got := m.Headers().Get(jetstream.MsgTTLHeader); got != emitstream.DeltaTTL.String() {
		t.Fatalf("the stored delta has %s %q, want %q", jetstream.MsgTTLHeader, got, emitstream.DeltaTTL)
	}

	off := startNodeWith(t, emitStreamCfg(t.TempDir(), emitstream.Config{}))
	sub, err := off.Conn().SubscribeSync("jido.emit.p/c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := off.publishTransient("p/c1", delta); err != nil {
		t.Fatal(err)
	}
	got, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Header.Get(jetstream.MsgTTLHeader); v != "" {
		t.Fatalf("without the stream a delta carries %s %q", jetstream.MsgTTLHeader, v)
	}
}

// TestEmitStreamClientRole: a client reads the emit stream through pull
// consumers of its own, named or ephemeral, and acknowledges what it
// read; it cannot delete or purge the stream, remove a message, change
// the stream, delete a consumer (another service's position) or make
// another stream.
func TestEmitStreamClientRole(t *testing.T) {
	var users []User
	for _, r := range Roles() {
		users = append(users, User{Name: r, Password: bcryptHash(t, r+"pw"), Role: r})
	}
	cfg := emitStreamCfg(t.TempDir(), emitstream.Config{On: true})
	cfg.NATS.Users = users
	n := startNodeWith(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := n.Conn().Request("jido.agent.c1.counter.increment", []byte(`{"by":1}`), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	admin := streamOf(t, n.Conn(), "JIDO_EMITS")
	waitStreamMsgs(t, admin, 4)

	js := jetstreamOf(t, connectAs(t, n, RoleClient))
	s, err := js.Stream(ctx, "JIDO_EMITS")
	if err != nil {
		t.Fatalf("stream info as a client: %v", err)
	}
	named, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "jido.emit.c1.>"})
	if err != nil {
		t.Fatalf("create a named pull consumer as a client: %v", err)
	}
	batch, err := named.Fetch(4, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("ack as a client: %v", err)
		}
		got++
	}
	if got != 4 || batch.Error() != nil {
		t.Fatalf("fetched %d of 4 (%v)", got, batch.Error())
	}
	if _, err := s.Consumer(ctx, "billing"); err != nil {
		t.Fatalf("consumer info as a client: %v", err)
	}
	ordered, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"jido.emit.c1.counter.changed"}})
	if err != nil {
		t.Fatalf("an ephemeral (ordered) consumer as a client: %v", err)
	}
	if m, err := ordered.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil || m.Headers().Get("ce-type") != "counter.changed" {
		t.Fatalf("read through an ephemeral consumer as a client: %v", err)
	}

	refused := map[string]func(context.Context) error{
		"delete the stream": func(ctx context.Context) error { return js.DeleteStream(ctx, "JIDO_EMITS") },
		"purge the stream":  func(ctx context.Context) error { return s.Purge(ctx) },
		"remove a message":  func(ctx context.Context) error { return s.DeleteMsg(ctx, 1) },
		"delete a consumer": func(ctx context.Context) error { return s.DeleteConsumer(ctx, "billing") },
		"change the stream": func(ctx context.Context) error {
			cfg := admin.CachedInfo().Config
			cfg.MaxAge = time.Second
			_, err := js.UpdateStream(ctx, cfg)
			return err
		},
		"make a stream": func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Subjects: []string{"mine.>"}})
			return err
		},
	}
	for what, f := range refused {
		// A publish the role forbids is refused by the server (the
		// client hears of it asynchronously), so the request is never
		// answered: its deadline is the refusal.
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		err := f(rctx)
		rcancel()
		if err == nil {
			t.Errorf("a client could %s", what)
		}
		t.Logf("%s: %v", what, err)
	}
	info, err := admin.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 4 || info.State.Consumers < 1 || info.Config.MaxAge != emitstream.DefaultMaxAge {
		t.Fatalf("after the client's attempts: %d messages, %d consumers, max age %s", info.State.Msgs, info.State.Consumers, info.Config.MaxAge)
	}
	if _, err := admin.Consumer(ctx, "billing"); err != nil {
		t.Fatalf("the client's consumer: %v", err)
	}
}

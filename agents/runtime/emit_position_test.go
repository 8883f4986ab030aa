package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
)

// natsHarness is a harness whose agents emit on a real NATS server
// (started with srvOpts), and a subscriber to subject there.
func natsHarness(t *testing.T, subject string, srvOpts []func(*natsserver.Options), adjust ...func(*Config)) (*harness, *nats.Subscription) {
	t.Helper()
	srv := natstest.RunServer(t, srvOpts...)
	pub, subConn := natstest.Connect(t, srv), natstest.Connect(t, srv)
	sub, err := subConn.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := subConn.Flush(); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, append([]func(*Config){func(c *Config) { c.Dispatch = dispatch.Env{Conn: pub} }}, adjust...)...)
	return h, sub
}

// decisionOf returns the position of the cmd record that decides signal
// id in stream.
func decisionOf(t *testing.T, l *eventlog.Log, stream, signalID string) eventlog.Entry {
	t.Helper()
	for e, err := range l.ReadStream(stream, eventlog.ReadOptions{Types: TypeCmd}) {
		if err != nil {
			t.Fatal(err)
		}
		var cr cmdRecord
		if err := json.Unmarshal(e.Event.Data(), &cr); err != nil {
			t.Fatal(err)
		}
		if cr.Signal == signalID {
			return e
		}
	}
	t.Fatalf("no decision of signal %s in %s", signalID, stream)
	return eventlog.Entry{}
}

func nextMsg(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no emit on %s: %v", sub.Subject, err)
	}
	return m
}

func positionOf(t *testing.T, m *nats.Msg) dispatch.Position {
	t.Helper()
	p, ok, err := dispatch.PositionOf(m.Header)
	if err != nil || !ok {
		t.Fatalf("emit %s without a position (%v): headers %v", m.Subject, err, m.Header)
	}
	return p
}

// TestEmitCarriesItsPosition: an emit published on NATS names the log
// position of the decision that made it — stream, stream sequence and
// global sequence of its cmd record — and its index among the decision's
// directives.
func TestEmitCarriesItsPosition(t *testing.T) {
	h, sub := natsHarness(t, "jido.emit.p1.probe.>", nil)
	h.start("probe", "p1", Options{})
	first := signal(t, "probe.emit", map[string]any{"n": 1})
	if _, err := h.rt.Call(t.Context(), "p1", first); err != nil {
		t.Fatal(err)
	}
	h.gate("g")
	h.open("g")
	second := signal(t, "probe.block_emit", map[string]any{"name": "g", "n": 2})
	if _, err := h.rt.Call(t.Context(), "p1", second); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		signal string
		index  int
	}{{first.ID(), 0}, {second.ID(), 1}} {
		d := decisionOf(t, h.log, "agent/p1", want.signal)
		m := nextMsg(t, sub)
		got := positionOf(t, m)
		if exp := (dispatch.Position{Stream: "agent/p1", Seq: d.Seq, GlobalSeq: d.GlobalSeq, Index: want.index}); got != exp {
			t.Errorf("emit of %s: position %+v, want %+v (its decision)", want.signal, got, exp)
		}
	}
}

// dyingStore is a Store that stops taking appends once it dies, as a
// process killed at that moment would: what it wrote stays, nothing more
// reaches the log.
type dyingStore struct {
	Store
	dead atomic.Bool
}

var errDied = errors.New("the process died")

func (d *dyingStore) Append(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error) {
	if d.dead.Load() {
		return eventlog.AppendResult{}, errDied
	}
	return d.Store.Append(ctx, stream, expected, events...)
}

func (d *dyingStore) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	if d.dead.Load() {
		return nil, errDied
	}
	return d.Store.AppendMulti(ctx, parts)
}

// TestEmitAgainAfterCrashIsTheSame: an emit that was published but whose
// outcome the log had not recorded when the process died is published
// again by recovery as the same message: same id, same time (its signal
// had none: it takes its decision's), same data, same position headers —
// so a subscriber that saw it drops the repeat by its position.
func TestEmitAgainAfterCrashIsTheSame(t *testing.T) {
	h, sub := natsHarness(t, "jido.emit.p1.probe.>", nil, func(c *Config) { c.EffectsLinger = time.Hour })
	// The runtime on a store that can die.
	if err := h.rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	store := &dyingStore{Store: h.log}
	cfg := h.cfg
	cfg.Store = store
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.rt = rt
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })

	h.start("probe", "p1", Options{})
	in := signal(t, "probe.emit", map[string]any{"n": 7})
	in.SetTime(time.Time{})
	if _, err := h.rt.Call(t.Context(), "p1", in); err != nil {
		t.Fatal(err)
	}
	before := nextMsg(t, sub)
	// The process dies with the emit's outcome unrecorded (it waits for a
	// next decision, or an hour).
	store.dead.Store(true)
	if err := h.rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.outcomes("agent/p1"); len(got) != 0 {
		t.Fatalf("outcomes recorded before the crash: %v; the test needs the emit pending", got)
	}
	if err := h.log.Close(); err != nil {
		t.Fatal(err)
	}
	h.openLog()
	h.startRuntime()
	if _, err := h.rt.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := nextMsg(t, sub)
	if p, q := positionOf(t, before), positionOf(t, again); p != q {
		t.Errorf("position before the crash %+v, after %+v", p, q)
	}
	for name := range before.Header {
		if b, a := before.Header.Get(name), again.Header.Get(name); b != a {
			t.Errorf("header %s: %q before the crash, %q after", name, b, a)
		}
	}
	if len(again.Header) != len(before.Header) || string(again.Data) != string(before.Data) {
		t.Errorf("published again as\n%v %s\nwas\n%v %s", again.Header, again.Data, before.Header, before.Data)
	}
}

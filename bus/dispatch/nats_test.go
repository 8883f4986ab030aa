package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

func TestNATSDispatchDelivers(t *testing.T) {
	nc := runNATS(t)
	cases := []struct {
		name        string
		cfg         Config
		subjects    bus.Subjects
		wantSubject string
		wantMode    codec.Mode
	}{
		{"zero config is the default emit subject, binary", Config{}, bus.Subjects{}, "jido.emit.team/c1.counter.changed", codec.Binary},
		{"structured", Config{Kind: KindNATS, Mode: ModeStructured}, bus.Subjects{}, "jido.emit.team/c1.counter.changed", codec.Structured},
		{"fixed subject", Config{Subject: "audit.signals"}, bus.Subjects{}, "audit.signals", codec.Binary},
		{"configured prefix", Config{Kind: KindNATS}, bus.Subjects{Prefix: "acme.jido"}, "acme.jido.emit.team/c1.counter.changed", codec.Binary},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := nc.SubscribeSync(tc.wantSubject)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			d, err := New(tc.cfg, Env{Conn: nc, Subjects: tc.subjects})
			if err != nil {
				t.Fatal(err)
			}
			sent := testSignal(t, "counter.changed")
			if err := d.Dispatch(context.Background(), "team/c1", &sent); err != nil {
				t.Fatalf("Dispatch: %v", err)
			}
			msg, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("no message on %s: %v", tc.wantSubject, err)
			}
			got, mode, err := (&codec.Decoder{}).Decode(msg, sent.Type())
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if mode != tc.wantMode {
				t.Errorf("mode = %v, want %v", mode, tc.wantMode)
			}
			assertSameSignal(t, got, sent)
		})
	}
}

// assertSameSignal compares two signals as their JSON event format, which
// covers every attribute, the extensions and the data.
func assertSameSignal(t *testing.T, got, want bus.Signal) {
	t.Helper()
	var g, w map[string]any
	for _, x := range []struct {
		s   bus.Signal
		dst *map[string]any
	}{{got, &g}, {want, &w}} {
		b, err := x.s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, x.dst); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("signal differs\n got: %v\nwant: %v", g, w)
	}
}

func TestNATSDispatchRefuses(t *testing.T) {
	nc := runNATS(t)
	all, err := nc.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{}, Env{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		from   string
		typ    string
		wantIs error
	}{
		{"wildcard in type", context.Background(), "c1", "counter.*", &bus.Error{Type: bus.ReasonInvalidType}},
		{"invalid agent id", context.Background(), "c 1", "counter.changed", &bus.Error{Type: bus.ReasonInvalidAgentID}},
		{"empty agent id", context.Background(), "", "counter.changed", &bus.Error{Type: bus.ReasonInvalidAgentID}},
		{"cancelled context", cancelled, "c1", "counter.changed", context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testSignal(t, "counter.changed")
			s.SetType(tc.typ) // after NewSignal, which would refuse it
			err := d.Dispatch(tc.ctx, tc.from, &s)
			if !errors.Is(err, tc.wantIs) {
				t.Fatalf("Dispatch error = %v, want one that is %v", err, tc.wantIs)
			}
			// Nothing went out: a marker published afterwards is the next
			// message the catch-all subscriber sees.
			if err := nc.Publish("marker", nil); err != nil {
				t.Fatal(err)
			}
			msg, err := all.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if msg.Subject != "marker" {
				t.Fatalf("a message went out on %s", msg.Subject)
			}
		})
	}
}

func TestNATSDispatchReturnsPublishError(t *testing.T) {
	nc := runNATS(t)
	d, err := New(Config{}, Env{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	s := testSignal(t, "counter.changed")
	if err := d.Dispatch(context.Background(), "c1", &s); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("Dispatch on a closed connection = %v, want nats.ErrConnectionClosed", err)
	}
}

func TestNewNATSNeedsConn(t *testing.T) {
	for _, cfg := range []Config{{}, {Targets: []Config{{Kind: KindNoop}, {Kind: KindNATS}}}} {
		if _, err := New(cfg, Env{}); err == nil {
			t.Errorf("New(%v) without Env.Conn succeeded", cfg)
		}
	}
}

// BenchmarkNATSDispatch measures publishing through Dispatch to an
// embedded server, flushed at the end, in signals per second.
func BenchmarkNATSDispatch(b *testing.B) {
	nc := runNATS(b)
	for _, mode := range []string{ModeBinary, ModeStructured} {
		b.Run(mode, func(b *testing.B) {
			d, err := New(Config{Mode: mode}, Env{Conn: nc})
			if err != nil {
				b.Fatal(err)
			}
			s := testSignal(b, "counter.changed")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Dispatch(ctx, "c1", &s); err != nil {
					b.Fatal(err)
				}
			}
			if err := nc.Flush(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

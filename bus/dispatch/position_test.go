package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestNATSDispatchSendsThePosition: a nats target sends the position the
// context carries in both content modes, and a fanout passes it to its
// nats targets; without one, no position header is sent, so a reader
// tells an emit of a decision from a signal of no decision.
func TestNATSDispatchSendsThePosition(t *testing.T) {
	nc := runNATS(t)
	sub, err := nc.SubscribeSync("jido.emit.c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	pos := Position{Stream: "agent/c1", Seq: 12, GlobalSeq: 345, Index: 2}
	with := WithPosition(context.Background(), pos)
	for _, tc := range []struct {
		name string
		cfg  Config
		ctx  context.Context
		want bool
	}{
		{"binary", Config{}, with, true},
		{"structured", Config{Mode: ModeStructured}, with, true},
		{"a list", Config{Targets: []Config{{}, {Kind: KindNoop}}}, with, true},
		{"no position", Config{}, context.Background(), false},
	} {
		d, err := New(tc.cfg, Env{Conn: nc})
		if err != nil {
			t.Fatal(err)
		}
		s := testSignal(t, "counter.changed")
		if err := d.Dispatch(tc.ctx, "c1", &s); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, ok, err := PositionOf(m.Header)
		if err != nil || ok != tc.want || (ok && got != pos) {
			t.Errorf("%s: position %+v, %v, %v; want %+v, %v (headers %v)", tc.name, got, ok, err, pos, tc.want, m.Header)
		}
	}
}

// TestPositionOfRefusesBadHeaders: headers that name a position badly
// are an error, not a position of zeros a reader would take for the
// log's start.
func TestPositionOfRefusesBadHeaders(t *testing.T) {
	good := nats.Header{HeaderStream: {"agent/c1"}, HeaderSeq: {"3"}, HeaderGlobalSeq: {"9"}, HeaderEmitIndex: {"0"}}
	for name, bad := range map[string][2]string{
		"seq not a number":    {HeaderSeq, "three"},
		"no seq":              {HeaderSeq, ""},
		"global seq negative": {HeaderGlobalSeq, "-9"},
		"index negative":      {HeaderEmitIndex, "-1"},
	} {
		h := nats.Header{}
		for k, v := range good {
			h[k] = v
		}
		h[bad[0]] = []string{bad[1]}
		if _, ok, err := PositionOf(h); err == nil || ok || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s: ok %v, error %v; want an error naming %s", name, ok, err, bad[0])
		}
	}
	// A conversation event has Jido-Seq but is no decision's emit.
	if _, ok, err := PositionOf(nats.Header{HeaderStream: {"conversation/p/c"}, HeaderSeq: {"4"}}); ok || err != nil {
		t.Errorf("a conversation event's headers read as an emit's position: %v %v", ok, err)
	}
}

package dispatch

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestNATSDispatchMsgID: an emit on the agent's own emit subject carries
// Nats-Msg-Id, its source and id, so that a stream capturing emits stores
// a re-run's copy once; one sent to a subject of the agent's choosing
// does not, so that one signal sent to two subjects a stream captures is
// not dropped as a duplicate.
func TestNATSDispatchMsgID(t *testing.T) {
	nc := runNATS(t)
	cases := []struct {
		name    string
		cfg     Config
		subject string
		want    string
	}{
		{"own emit subject", Config{}, "jido.emit.c1.counter.changed", `"/agent/c1" "sig-1"`},
		{"fixed subject", Config{Subject: "audit.signals"}, "audit.signals", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := nc.SubscribeSync(tc.subject)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			d, err := New(tc.cfg, Env{Conn: nc, Subjects: bus.Subjects{}})
			if err != nil {
				t.Fatal(err)
			}
			s := testSignal(t, "counter.changed")
			s.SetID("sig-1")
			s.SetSource("/agent/c1")
			if err := d.Dispatch(context.Background(), "c1", &s); err != nil {
				t.Fatal(err)
			}
			msg, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := msg.Header.Get(HeaderMsgID); got != tc.want {
				t.Errorf("%s = %q, want %q", HeaderMsgID, got, tc.want)
			}
		})
	}
}

// TestMsgIDDistinguishesSources: two agents answering one broadcast emit
// signals with one id (agents.OriginKey depends on the input alone); their
// Msg-Ids differ, or a stream would keep only the first.
func TestMsgIDDistinguishesSources(t *testing.T) {
	a, b := testSignal(t, "counter.changed"), testSignal(t, "counter.changed")
	a.SetID("x~1.0")
	b.SetID("x~1.0")
	a.SetSource("/agent/a")
	b.SetSource("/agent/b")
	if MsgID(&a) == MsgID(&b) {
		t.Fatalf("MsgID %q for two sources", MsgID(&a))
	}
	// Quoting keeps the two parts apart whatever they hold.
	c, d := testSignal(t, "t"), testSignal(t, "t")
	c.SetSource("/a b")
	c.SetID("c")
	d.SetSource("/a")
	d.SetID("b c")
	if MsgID(&c) == MsgID(&d) {
		t.Fatalf("MsgID %q for two signals", MsgID(&c))
	}
}

// FuzzAppendQuoted: appendQuoted is strconv.Quote, whatever the bytes.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "/agent/c1", "01JDQ7ZV3M6Y2S3QK0F5N8C9TB.0", `a"b`, `a\b`, "tab\there", "naïve ☃", "\x7f", "\xff", "'single'", "~!@#$%^&*()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendQuoted([]byte("x"), s)), "x"+strconv.Quote(s); got != want {
			t.Fatalf("appendQuoted(%q) = %s, want %s", s, got, want)
		}
	})
}

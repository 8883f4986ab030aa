package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// TestLargeDeadLetterFitsTheLog: a refused input too large to be stored
// whole once wrapped (its data is base64 in the record's JSON, a third
// larger) is stored truncated, with its original size and sha256, as a
// signal the log takes under the same limits; a small one is stored
// whole (issue 11, defect 9).
func TestLargeDeadLetterFitsTheLog(t *testing.T) {
	lim := bus.Limits{}
	body := []byte(strings.Repeat("0123456789", 80_000)) // 800 KB: 1.07 MB as base64
	d := DeadLetter{
		Reason: bus.ReasonInvalidAttribute, Error: "attribute id is not valid UTF-8", Subject: "jido.agent.p1.counter.increment",
		Header: nats.Header{"ce-id": {"bad%FF"}, "ce-source": {strings.Repeat("s", 70<<10)}}, Data: body, Time: time.Unix(1, 0).UTC(),
	}
	s := d.Signal(lim)
	if err := bus.ValidateSignal(&s, lim); err != nil {
		t.Fatalf("the log refuses the dead letter of an 800 KB input: %v", err)
	}
	var got DeadLetter
	if err := json.Unmarshal(s.Data(), &got); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if !got.Truncated || got.Size != len(body) || got.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("truncated %v, size %d, sha256 %s; want true, %d, %x", got.Truncated, got.Size, got.SHA256, len(body), sum)
	}
	if len(got.Data) == 0 || string(got.Data) != string(body[:len(got.Data)]) {
		t.Fatalf("kept %d bytes, not a prefix of the original", len(got.Data))
	}
	if got.Reason != d.Reason || got.Error != d.Error || got.Subject != d.Subject || got.Header.Get("ce-id") != "bad%FF" {
		t.Fatalf("the record lost what it is about: %q %q %q %v", got.Reason, got.Error, got.Subject, got.Header.Get("ce-id"))
	}

	small := d
	small.Data = []byte(`{"by":1}`)
	s = small.Signal(lim)
	var whole DeadLetter
	if err := json.Unmarshal(s.Data(), &whole); err != nil {
		t.Fatal(err)
	}
	if whole.Truncated || whole.Size != 0 || string(whole.Data) != `{"by":1}` {
		t.Fatalf("a small dead letter was changed: truncated %v, size %d, data %q", whole.Truncated, whole.Size, whole.Data)
	}
}

// TestDeadLetterOfAnOddSubjectFitsTheLog: the record's subject attribute
// is the original subject, which need not be a CloudEvents string; it is
// made one (the record's data keeps the original).
func TestDeadLetterOfAnOddSubjectFitsTheLog(t *testing.T) {
	d := DeadLetter{Reason: bus.ReasonInvalidSubject, Error: "x", Subject: "jido.agent.a\xff\x01b.t", Time: time.Unix(1, 0).UTC()}
	s := d.Signal(bus.Limits{})
	if err := bus.ValidateSignal(&s, bus.Limits{}); err != nil {
		t.Fatalf("the log refuses the dead letter: %v", err)
	}
}

// TestLargeRefusedInputReachesTheDLQSubject: the dead letter of an input
// that filled the server's max payload does not fit once the dead-letter
// headers are added; it is published truncated, saying so, rather than
// not at all.
func TestLargeRefusedInputReachesTheDLQSubject(t *testing.T) {
	f := newFixture(t, Options{Limits: bus.Limits{MaxDataBytes: -1}})
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) { d.Respond(nil) }); err != nil {
		t.Fatal(err)
	}
	h := nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"bad%FF"}, "ce-source": {"x"}}
	room := int(f.client.MaxPayload()) - 200
	body := []byte(strings.Repeat("x", room))
	if err := f.client.PublishMsg(&nats.Msg{Subject: "jido.agent.p1.counter.increment", Header: h, Data: body}); err != nil {
		t.Fatal(err)
	}
	dl := f.nextDeadLetter(t)
	sum := sha256.Sum256(body)
	if dl.Header.Get(HeaderDLQReason) != bus.ReasonInvalidAttribute || dl.Header.Get(HeaderDLQTruncated) != "true" ||
		dl.Header.Get(HeaderDLQSize) != strconv.Itoa(len(body)) || dl.Header.Get(HeaderDLQSHA256) != hex.EncodeToString(sum[:]) {
		t.Fatalf("dead letter headers = %v", dl.Header)
	}
	if len(dl.Data) == 0 || len(dl.Data) >= len(body) || string(dl.Data) != string(body[:len(dl.Data)]) {
		t.Fatalf("dead letter body is %d bytes, want a prefix of the original's %d", len(dl.Data), len(body))
	}
}

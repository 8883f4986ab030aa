package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestForbiddenDeadLetterWithholdsTheBody: a request refused as
// forbidden may carry what the caller had no business sending (an inline
// webhook secret, forged events); its dead letter says who, where, when
// and why, and keeps the body's size and sha256, never the body — not on
// <prefix>.dlq.forbidden and not in the record the log gets.
func TestForbiddenDeadLetterWithholdsTheBody(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.bus.HandleAPI("jido.api.agent.start", func(context.Context, []byte) (any, error) {
		return nil, bus.Errorf(bus.ReasonForbidden, "an inline webhook secret is refused; name a JIDO_SECRET_ variable in secret_env")
	}); err != nil {
		t.Fatal(err)
	}
	body := `{"type":"counter","options":{"default_dispatch":{"kind":"webhook","url":"https://x.example","secret":"hunter2"}}}`
	reply, err := f.client.Request("jido.api.agent.start", []byte(body), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(reply.Data), `"forbidden"`) {
		t.Fatalf("reply %s, want a forbidden error", reply.Data)
	}
	sum := sha256.Sum256([]byte(body))
	m := f.nextDeadLetter(t)
	if strings.Contains(string(m.Data), "hunter2") || len(m.Data) != 0 {
		t.Fatalf("the dead letter on %s keeps the body %q", m.Subject, m.Data)
	}
	if m.Header.Get(HeaderDLQWithheld) != "true" || m.Header.Get(HeaderDLQSize) != strconv.Itoa(len(body)) || m.Header.Get(HeaderDLQSHA256) != hex.EncodeToString(sum[:]) {
		t.Fatalf("headers %v: want withheld, the size and the sha256 of the body", m.Header)
	}
	f.mu.Lock()
	filed := f.filed
	f.mu.Unlock()
	if len(filed) != 1 {
		t.Fatalf("%d records filed, want 1", len(filed))
	}
	d := filed[0]
	if len(d.Data) != 0 || !d.Withheld || d.Size != len(body) || d.SHA256 != hex.EncodeToString(sum[:]) || d.Reason != bus.ReasonForbidden {
		t.Fatalf("record %+v: want the body withheld with its size and sha256", d)
	}
}

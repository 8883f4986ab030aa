package dlq

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestOneBadDeadLetterDoesNotFailItsBatch: dead letters share appends,
// and the log refuses a whole batch for one entry it refuses. The others
// are then appended one by one, and the refused one is stored as a stub
// — what it was about, and the size and sha256 of its record — never
// dropped (issue 11, defect 9).
func TestOneBadDeadLetterDoesNotFailItsBatch(t *testing.T) {
	lim := bus.Limits{MaxDataBytes: 4096}
	log, err := eventlog.Open(t.TempDir(), eventlog.Options{Limits: lim, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dl := func(subject string, size int) natsbus.DeadLetter {
		return natsbus.DeadLetter{Reason: bus.ReasonInvalidAttribute, Error: "bad", Subject: subject, Data: []byte(strings.Repeat("x", size)), Time: at}
	}
	good1 := dl("jido.agent.a.t", 10).Signal(lim)
	// Made under other limits than the log's: the log refuses it.
	bad := dl("jido.agent.b.t", 8000).Signal(bus.Limits{MaxDataBytes: -1})
	good2 := dl("jido.agent.c.t", 10).Signal(lim)

	w := &Writer{log: log, limits: lim, logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ch: make(chan bus.Signal, 3), done: make(chan struct{})}
	// Queued before the writer runs, so that the three share one append.
	for _, s := range []bus.Signal{good1, bad, good2} {
		w.ch <- s
	}
	go w.run()
	w.Close()

	got := map[string]bus.Signal{}
	for e, err := range log.ReadStream(Stream, eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got[e.Event.ID()] = e.Event
	}
	for _, s := range []bus.Signal{good1, good2} {
		if _, ok := got[s.ID()]; !ok {
			t.Fatalf("dead letter %s (%s) was lost with the bad one in its batch; stored: %d", s.ID(), s.Subject(), len(got))
		}
	}
	stub, ok := got[bad.ID()]
	if !ok {
		t.Fatalf("the dead letter the log refused left no trace; stored: %d", len(got))
	}
	var d natsbus.DeadLetter
	if err := json.Unmarshal(stub.Data(), &d); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bad.Data())
	if !d.Truncated || d.Size != len(bad.Data()) || d.SHA256 != hex.EncodeToString(sum[:]) || d.Subject != "jido.agent.b.t" || d.Reason != bus.ReasonInvalidAttribute {
		t.Fatalf("stub = %+v, want truncated, size %d, sha256 %x, the subject and the reason", d, len(bad.Data()), sum)
	}
}

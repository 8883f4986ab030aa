package jslog

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog"
)

// TestVerifyCleanLog: a log written only by its Log verifies clean, and
// the report counts its events and its messages (appends and snapshots).
func TestVerifyCleanLog(t *testing.T) {
	l, _ := openLog(t, Options{Partitions: 3})
	mustAppend(t, l, "agent/a", eventlog.NoStream, sigs("test.event", "1", "2", "3")...)
	mustAppend(t, l, "agent/a", eventlog.ExactVersion(3), sig("test.event", "4"))
	mustAppend(t, l, "agent/b", eventlog.NoStream, sig("test.event", "1"))
	if err := l.SaveSnapshot(t.Context(), "agent/a", 4, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	var progressed uint64
	r, err := l.Verify(t.Context(), func(n uint64) { progressed = n })
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.StreamEntries != 5 || r.GlobalEntries != 4 {
		t.Fatalf("report = %+v; want 5 events in 3 messages and 1 snapshot, nothing damaged", r)
	}
	if progressed != 9 {
		t.Errorf("progress last said %d, want 9 (every entry and message checked)", progressed)
	}

	// An empty log is clean too.
	empty, _ := openLog(t, Options{Partitions: 2})
	if r, err := empty.Verify(t.Context(), nil); err != nil || !r.OK() || r.StreamEntries != 0 || r.Damaged == nil {
		t.Fatalf("empty log: %+v, %v; want nothing checked and an empty (not nil) damage list", r, err)
	}
}

// TestVerifyFindsDamage: messages written past the Log (by any JetStream
// client with the rights to) that do not make a log are each reported,
// and the scan goes on past them.
func TestVerifyFindsDamage(t *testing.T) {
	l, nc := openLog(t, Options{Partitions: 3})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "agent/a", eventlog.NoStream, sig("test.event", "1"))
	mustAppend(t, l, "agent/b", eventlog.NoStream, sig("test.event", "1"))
	publish := func(subject string, hdr map[string]string, body string) {
		t.Helper()
		m := nats.NewMsg(subject)
		for k, v := range hdr {
			m.Header.Set(k, v)
		}
		m.Data = []byte(body)
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatalf("publish on %s: %v", subject, err)
		}
	}
	event := `[{"specversion":"1.0","id":"x","source":"test","type":"test.event"}]`
	// No headers on agent/a's subject.
	publish(l.Subject("agent/a"), nil, event)
	// agent/b jumps from version 1 to 5.
	publish(l.Subject("agent/b"), map[string]string{hdrVersion: "5", hdrEvents: "1", hdrStream: "agent/b"}, event)
	// A body that is not events.
	publish(l.Subject("agent/b"), map[string]string{hdrVersion: "6", hdrEvents: "1", hdrStream: "agent/b"}, "not json")
	// A stream's subject in a partition that is not its own.
	own := Partition("agent/c", 3)
	other := (own + 1) % 3
	publish(l.logSubject("agent/c", other), map[string]string{hdrVersion: "1", hdrEvents: "1", hdrStream: "agent/c"}, event)
	// A snapshot past its stream's head.
	publish(l.snapshotSubject("agent/a"), map[string]string{hdrVersion: "9", hdrStream: "agent/a"}, "{}")

	r, err := l.Verify(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, d := range r.Damaged {
		got += d.Position() + ": " + d.Reason + "\n"
	}
	for _, want := range []string{
		"agent/a seq 0 (global seq 3): message 3 of " + l.partitionStreamName(Partition("agent/a", 3)) + ": header Jido-Version", // the headerless message
		"agent/b seq 5 (global seq 4): message 4 of",
		"starts at version 5, the stream was at 1",
		"agent/b seq 6 (global seq 5): message 5 of",
		"body: invalid character",
		"is on subject " + l.logSubject("agent/c", other) + ", which is not a log stream of partition " + itoaU(uint64(other)),
		"agent/a seq 9: snapshot message 1 of " + l.snapshotStreamName() + " is at version 9, past the stream's last version 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report does not say %q; it says:\n%s", want, got)
		}
	}
	if len(r.Damaged) != 5 {
		t.Errorf("%d damaged, want 5:\n%s", len(r.Damaged), got)
	}
	// The good entries around the damage were still read: agent/a's and
	// agent/b's first, and the misplaced message's event.
	if r.StreamEntries != 3 || r.GlobalEntries != 7 {
		t.Errorf("counted %d events and %d messages, want 3 and 7", r.StreamEntries, r.GlobalEntries)
	}
}

// TestVerifyStopsWithItsContext: a verify whose context ends returns the
// context's error, not a report that looks complete.
func TestVerifyStopsWithItsContext(t *testing.T) {
	l, _ := openLog(t, Options{Partitions: 2})
	mustAppend(t, l, "agent/a", eventlog.NoStream, sig("test.event", "1"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Verify(ctx, nil); err == nil {
		t.Fatal("Verify with an ended context returned no error")
	}
}

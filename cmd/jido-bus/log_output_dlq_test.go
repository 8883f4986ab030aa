package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// TestLogShowDLQSaysWhy: log show dlq prints each dead letter's reason,
// the subject it came on and the error, not only the dead-letter event's
// type, id and source (the same on every row).
func TestLogShowDLQSaysWhy(t *testing.T) {
	isolateNATSEnv(t)
	dir := t.TempDir()
	l, err := eventlog.Open(logDir(dir), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []natsbus.DeadLetter{
		{Reason: "not_found", Error: `no agent "nosuch" is running`, Subject: "jido.agent.nosuch.counter.increment", Time: time.Now()},
		{Reason: "invalid_event", Error: "/data/provider: minLength: got 0,\nwant 1", Subject: "jido.agent.app/c1.conversation.llm.requested", Time: time.Now()},
	} {
		if _, err := l.Append(context.Background(), node.DeadLetterStream, eventlog.AnyVersion, d.Signal(bus.Limits{})); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := runLog(t, "", "show", "dlq", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "REASON") || !strings.Contains(lines[0], "ERROR") {
		t.Fatalf("log show dlq:\n%s", out)
	}
	for i, want := range [][]string{
		{"not_found", "jido.agent.nosuch.counter.increment", `no agent "nosuch" is running`},
		{"invalid_event", "conversation.llm.requested", "/data/provider: minLength: got 0, want 1"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("row %d does not say %q:\n%s", i+1, w, out)
			}
		}
	}
	if js, _, err := runLog(t, "", "show", "dlq", "--data-dir", dir, "-o", "json"); err != nil || !strings.Contains(js, `"reason":"not_found"`) {
		t.Errorf("log show dlq -o json: %v\n%s", err, js)
	}
}

// TestLogShowDLQWithoutDeadLetters: before anything is refused there is
// no stream dlq; log show dlq says there are no dead letters and exits 0
// (it failed: "stream dlq does not exist", exit 3), and -o json is an
// empty list.
func TestLogShowDLQWithoutDeadLetters(t *testing.T) {
	isolateNATSEnv(t)
	dir := makeLog(t) // streams agent/a and agent/b only
	out, errOut, err := runLog(t, "", "show", "dlq", "--data-dir", dir)
	if err != nil || !strings.Contains(errOut, "no dead letters") || strings.TrimSpace(out) != strings.Join(deadLetterColumns, "  ") {
		t.Errorf("log show dlq with none: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	out, _, err = runLog(t, "", "show", "dlq", "--data-dir", dir, "-o", "json")
	if err != nil || strings.TrimSpace(out) != `{"entries":[],"next":null}` {
		t.Errorf("log show dlq -o json with none: %v\n%s", err, out)
	}
	if _, _, err := runLog(t, "", "show", "agent/nosuch", "--data-dir", dir); exitCode(err) != exitNotFound {
		t.Errorf("log show of another missing stream: %v, want not_found", err)
	}
}

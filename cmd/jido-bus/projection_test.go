package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/projections"
)

// runRootWithin runs the command line args like runRoot, but ends it
// after d, so that a command that hangs fails its test instead of
// hanging it.
func runRootWithin(t *testing.T, d time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// TestProjectionRebuildOnALogWithoutConversations is issue 11 defect 13:
// on a log with no conversation event, `projection rebuild` waited
// forever, through a node and on the data dir alike.
func TestProjectionRebuildOnALogWithoutConversations(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	n := startNode(t, dir)
	defer func() { n.Shutdown(context.Background()) }()
	on := []string{"--nats-url", n.URL()}
	for _, args := range [][]string{
		{"agent", "start", "counter", "--id", "c1"},
		{"agent", "call", "c1", "counter.increment", `{"by":2}`},
		{"agent", "call", "c1", "counter.increment", `{"by":3}`},
	} {
		if out, err := runRoot(t, append(args, on...)...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	out, err := runRootWithin(t, 20*time.Second, append([]string{"projection", "rebuild", "timeline"}, on...)...)
	if err != nil || !strings.Contains(out, "rebuilt timeline") || !strings.Contains(out, "into 0 keys") {
		t.Fatalf("projection rebuild through the node: %v\n%s", err, out)
	}
	if _, err := runRootWithin(t, 20*time.Second, append([]string{"projection", "rebuild", "nope"}, on...)...); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("rebuild of an unknown projection through the node: %v", err)
	}
	n.Shutdown(context.Background())

	off := []string{"--data-dir", dir}
	out, err = runRootWithin(t, 20*time.Second, append([]string{"projection", "rebuild", "timeline"}, off...)...)
	if err != nil || !strings.Contains(out, "rebuilt timeline") || !strings.Contains(out, "into 0 keys") {
		t.Fatalf("projection rebuild on the data dir: %v\n%s", err, out)
	}
	out, err = runRootWithin(t, 20*time.Second, append([]string{"projection", "ls", "--json"}, off...)...)
	var shape struct{ Projections []projections.Status }
	if err != nil || json.Unmarshal([]byte(out), &shape) != nil || len(shape.Projections) == 0 {
		t.Fatalf("projection ls on the data dir: %v\n%s", err, out)
	}
	for _, p := range shape.Projections {
		if p.Lag != 0 || p.Rebuilding {
			t.Errorf("projection ls on the data dir: %+v", p)
		}
	}
}

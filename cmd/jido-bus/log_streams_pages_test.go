package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestLogStreamsListsEveryPage: the log API answers streams in pages (a
// node with tens of thousands of streams would not fit one reply);
// `log streams` follows Next and lists them all.
func TestLogStreamsListsEveryPage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := eventlog.Open(logDir(dir), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("s", 900)
	const n = 700
	for i := range n {
		s, err := bus.NewSignal("user.created", "test", map[string]int{"i": i})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(context.Background(), fmt.Sprintf("agent/%s%04d", long, i), eventlog.AnyVersion, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runLog(t, "", "streams", "--data-dir", dir, "-o", "json")
	if err != nil {
		t.Fatalf("log streams: %v\n%s", err, stderr)
	}
	var got struct {
		Streams []eventlog.StreamInfo `json:"streams"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("log streams -o json: %v\n%.300s", err, out)
	}
	if len(got.Streams) != n {
		t.Fatalf("log streams listed %d streams, want %d", len(got.Streams), n)
	}
}

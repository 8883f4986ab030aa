package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// noNode is a NATS URL where nothing listens.
const noNode = "nats://127.0.0.1:1"

// runLog runs `jido-bus log <args>` in process and returns stdout, stderr
// and the error.
func runLog(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"log"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// makeLog writes a data dir with agent/a (3 events) and agent/b (1).
func makeLog(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	l, err := eventlog.Open(logDir(dir), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, e := range []struct{ stream, typ, id string }{
		{"agent/a", "user.created", "a1"}, {"agent/a", "user.deleted", "a2"},
		{"agent/b", "user.created", "b1"}, {"agent/a", "user.created", "a3"},
	} {
		s, err := bus.NewSignal(e.typ, "test", map[string]string{"id": e.id})
		if err != nil {
			t.Fatal(err)
		}
		s.SetID(e.id)
		if _, err := l.Append(context.Background(), e.stream, eventlog.AnyVersion, s); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLogCommandsOnDataDir(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	local := []string{"--data-dir", dir}
	cases := []struct {
		name    string
		args    []string
		want    []string // substrings of stdout
		notWant []string
	}{
		{"streams table", []string{"streams"}, []string{"STREAM", "agent/a", "3", "agent/b"}, nil},
		{"streams json", []string{"streams", "--json", "--stream-prefix", "agent/b"}, []string{`"stream":"agent/b","head":1`}, []string{"agent/a"}},
		{"show", []string{"show", "agent/a"}, []string{"SEQ", "user.created", "a1", "a2", "a3"}, nil},
		{"show from and limit", []string{"show", "agent/a", "--from", "2", "--limit", "1"}, []string{"a2"}, []string{"a1", "a3"}},
		{"show type filter", []string{"show", "agent/a", "--type", "user.deleted"}, []string{"a2"}, []string{"a1", "a3"}},
		{"show json", []string{"show", "agent/b", "--json"}, []string{`"stream":"agent/b"`, `"global_seq":3`, `"id":"b1"`}, nil},
		{"tail stream", []string{"tail", "agent/a", "-n", "2"}, []string{"a2", "a3"}, []string{"a1"}},
		{"tail all", []string{"tail", "--all", "-n", "2"}, []string{"b1", "a3"}, []string{"a2"}},
		{"verify", []string{"verify"}, []string{"checked 4 stream entries and 4 global entries", "ok"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runLog(t, "", append(tc.args, local...)...)
			if err != nil {
				t.Fatalf("%v (stderr %s)", err, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestLogExportImportTruncate(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	local := []string{"--data-dir", dir}
	exported, _, err := runLog(t, "", append([]string{"export", "agent/a"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(exported), "\n")
	if len(lines) != 3 {
		t.Fatalf("export wrote %d lines:\n%s", len(lines), exported)
	}
	for _, line := range lines {
		var ev bus.Signal
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q is not a CloudEvent: %v", line, err)
		}
	}
	file := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	// Importing twice adds the events once.
	for _, want := range []string{"appended 3, already present 0", "appended 0, already present 3"} {
		out, _, err := runLog(t, "", append([]string{"import", file, "--stream", "agent/copy"}, local...)...)
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("import: %q, %v; want %q", out, err, want)
		}
	}
	// From stdin, into a stream that has them already.
	out, _, err := runLog(t, exported, append([]string{"import", "-", "--stream", "agent/a"}, local...)...)
	if err != nil || !strings.Contains(out, "appended 0, already present 3") {
		t.Fatalf("import from stdin: %q, %v", out, err)
	}
	_, _, err = runLog(t, "{not json\n", append([]string{"import", "-", "--stream", "agent/a"}, local...)...)
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("bad line: %v", err)
	}

	out, _, err = runLog(t, "", append([]string{"truncate", "agent/a", "--before", "3", "--yes"}, local...)...)
	if err != nil || !strings.Contains(out, "removed 2") {
		t.Fatalf("truncate: %q, %v", out, err)
	}
	_, _, err = runLog(t, "", append([]string{"show", "agent/a", "--from", "1"}, local...)...)
	if err == nil || !strings.Contains(err.Error(), "agent/a") || !strings.Contains(err.Error(), "seq 1") || !errors.Is(err, eventlog.ErrGone) {
		t.Fatalf("show truncated: %v", err)
	}
}

func TestLogVerifyReportsDamage(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	damageEntry(t, dir)
	out, _, err := runLog(t, "", "verify", "--data-dir", dir)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("verify of a damaged log: %v", err)
	}
	if !strings.Contains(out, "DAMAGED agent/a seq 2") {
		t.Fatalf("report does not name the entry:\n%s", out)
	}
	// The rest stays readable; show skips the damaged entry and says so.
	out, errOut, err := runLog(t, "", "show", "agent/a", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "a3") || !strings.Contains(errOut, "agent/a seq 2") {
		t.Fatalf("show of a damaged stream: %v\n%s\n%s", err, out, errOut)
	}
}

// damageEntry overwrites the stored value of agent/a seq 2 through Pebble
// with one that fails its checksum. The keys are built by the layout the
// eventlog package documents (layout 2): 'S' stream 0x00 seq (8 bytes
// big-endian) holds the entry's global sequence, 'G' gseq its value.
func damageEntry(t *testing.T, dir string) {
	t.Helper()
	db, err := pebble.Open(logDir(dir), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gseq, closer, err := db.Get(binary.BigEndian.AppendUint64([]byte("Sagent/a\x00"), 2))
	if err != nil {
		t.Fatal(err)
	}
	key := append([]byte("G"), gseq...)
	closer.Close()
	v, closer, err := db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), v...)
	closer.Close()
	bad[len(bad)-1] ^= 0xff
	if err := db.Set(key, bad, pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

func TestLogThroughRunningNode(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	l, err := eventlog.Open(logDir(dir), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	s := natsbus.New(nc, natsbus.Options{})
	if err := logapi.Serve(s, logapi.Local{Log: l}); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())

	out, errOut, err := runLog(t, "", "show", "agent/a", "--nats-url", srv.ClientURL())
	if err != nil || !strings.Contains(out, "a3") {
		t.Fatalf("show through the node: %v\n%s\n%s", err, out, errOut)
	}
	out, _, err = runLog(t, "", "show", "agent/zz", "--nats-url", srv.ClientURL())
	if err == nil || !strings.Contains(err.Error(), "stream agent/zz does not exist") || out != "" {
		t.Fatalf("show of a missing stream through the node: %v, output %q", err, out)
	}
	// The data dir itself is locked by the node, and says how to read it.
	_, _, err = runLog(t, "", "streams", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "in use by a running node") || !strings.Contains(err.Error(), "-s/--server") {
		t.Fatalf("streams on a locked dir: %v", err)
	}
}

// TestLogMissingStream: every command that reads a stream says a missing
// one does not exist and where to find those that do, and prints nothing.
func TestLogMissingStream(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	for _, verb := range []string{"show", "export", "tail", "replay"} {
		out, _, err := runLog(t, "", verb, "agent/zz", "--data-dir", dir)
		if err == nil || !strings.Contains(err.Error(), "stream agent/zz does not exist ('jido-bus log streams'") {
			t.Errorf("%s: err = %v", verb, err)
		}
		if out != "" {
			t.Errorf("%s printed %q", verb, out)
		}
	}
}

func TestLogNoDataDir(t *testing.T) {
	_, _, err := runLog(t, "", "streams", "--data-dir", filepath.Join(t.TempDir(), "none"))
	if err == nil || !strings.Contains(err.Error(), "no event log in") {
		t.Fatalf("err = %v", err)
	}
}

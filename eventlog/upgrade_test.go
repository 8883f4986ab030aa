package eventlog

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/layout1.golden from the fixture (only with the build that wrote layout 1)")

// copyFixture copies the committed layout-1 data directory into a fresh
// directory of fs, since opening a log writes to it.
func copyFixture(t testing.TB, fs vfs.FS, dst string) {
	t.Helper()
	src := filepath.Join("testdata", "layout1")
	names, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		f, err := fs.Create(fs.PathJoin(dst, n.Name()), vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// dumpLog describes everything a reader of l can see: the streams, each
// stream's entries and snapshot, the global order and the verify report.
// The golden file holds what the build that wrote the fixture saw.
func dumpLog(t testing.TB, l *Log) string {
	t.Helper()
	var b strings.Builder
	line := func(kind string, v any) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s\n", kind, j)
	}
	for _, s := range l.Streams("") {
		line("stream", s)
		for e, err := range l.ReadStream(s.Stream, ReadOptions{}) {
			line("entry", entryDump(e, err))
		}
		snap, err := l.LoadSnapshot(s.Stream)
		if err == nil {
			line("snapshot", map[string]any{"version": snap.Version, "data": string(snap.Data)})
		}
	}
	for e, err := range l.ReadAll(ReadOptions{}) {
		line("global", entryDump(e, err))
	}
	for e, err := range l.ReadAll(ReadOptions{Backward: true, Limit: 3}) {
		line("last", entryDump(e, err))
	}
	r, err := l.Verify(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	line("verify", map[string]any{"stream_entries": r.StreamEntries, "ok": r.OK(), "damaged": r.Damaged})
	return b.String()
}

func entryDump(e Entry, err error) map[string]any {
	if err != nil {
		return map[string]any{"err": err.Error()}
	}
	ev, jerr := json.Marshal(e.Event)
	if jerr != nil {
		ev = []byte(jerr.Error())
	}
	return map[string]any{"stream": e.Stream, "seq": e.Seq, "gseq": e.GlobalSeq, "time": e.Time, "size": e.Size, "event": string(ev)}
}

// TestLayout1FixtureReadsAsWritten opens (a copy of) the fixture written
// by the build before layout 2 and checks that every reader sees exactly
// what that build saw.
func TestLayout1FixtureReadsAsWritten(t *testing.T) {
	fs := vfs.NewMem()
	copyFixture(t, fs, "db")
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := dumpLog(t, l)
	golden := filepath.Join("testdata", "layout1.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the fixture reads differently from what the build that wrote it read:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
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

// layoutKey returns the layout key of the log in dir of fs, read through
// Pebble itself (on a copy: opening writes).
func layoutKey(t *testing.T, fs *vfs.MemFS) []byte {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: copyFS(fs), Logger: pebbleLogger{discardLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, closer, err := db.Get(keyLayout)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	return append([]byte(nil), v...)
}

// TestLayout1Upgrade: the upgrade marks the log done last, is not run
// again, and leaves a log that appends as the old one would have:
// duplicates of retained entries are found, events of removed positions
// are appended again.
func TestLayout1Upgrade(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	copyFixture(t, fs, "db")
	var logs strings.Builder
	opts := Options{FS: fs, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	l, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "upgrading the key layout from 1 to 2") || !strings.Contains(logs.String(), "entries=25") ||
		!strings.Contains(logs.String(), "upgraded the key layout to 2") || !strings.Contains(logs.String(), "converted=25") {
		t.Fatalf("the upgrade does not say what it does:\n%s", logs.String())
	}
	if v, closer, err := l.db.Get(keyLayout); err != nil || string(v) != string([]byte{layoutVersion}) {
		t.Fatalf("layout key %v, %v", v, err)
	} else {
		closer.Close()
	}
	if values, index := keysOf(t, l, kindGlobal), keysOf(t, l, kindStream); len(values) != 25 || len(index) != 25 {
		t.Fatalf("%d values, %d index entries: want 25 each", len(values), len(index))
	}
	res, err := l.Append(ctx, "agent/a", AnyVersion, sig("user.said", "agent/a-s1"))
	if err != nil || !res.Positions[0].Duplicate || res.Positions[0].Seq != 1 || res.Positions[0].GlobalSeq != 1 {
		t.Fatalf("re-sent retained event: %+v, %v", res, err)
	}
	res, err = l.Append(ctx, "agent/b", AnyVersion, sig("user.said", "agent/b-s1"))
	if err != nil || res.Positions[0].Duplicate || res.Positions[0].Seq != 15 || res.Positions[0].GlobalSeq != 42 {
		t.Fatalf("re-sent truncated event: %+v, %v", res, err)
	}
	res, err = l.Append(ctx, "agent/c", NoStream, sig("user.said", "agent/c-s1"))
	if err != nil || res.Positions[0].Seq != 1 {
		t.Fatalf("re-sent deleted stream's event: %+v, %v", res, err)
	}
	if r, err := l.Verify(ctx, nil); err != nil || !r.OK() || r.StreamEntries != 27 || r.GlobalEntries != 27 {
		t.Fatalf("verify after the upgrade: %+v, %v", r, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	l, err = Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if strings.Contains(logs.String(), "upgrad") {
		t.Fatalf("a log in layout 2 was upgraded again:\n%s", logs.String())
	}
}

// TestLayout1UpgradeInterrupted kills the upgrade (takes the filesystem
// as a crash leaves it: all, none or some of what was not synced) after
// each of its batches: the log is then still marked layout 1 or being
// upgraded — never read as done — and the next Open finishes it, after
// which every reader sees what the old build saw.
func TestLayout1UpgradeInterrupted(t *testing.T) {
	defer func(n int) { upgradeBatchEntries, upgradeBatchDone = n, nil }(upgradeBatchEntries)
	upgradeBatchEntries = 4 // 25 entries: 7 batches
	want, err := os.ReadFile(filepath.Join("testdata", "layout1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	mixed := false
	for batch := 1; batch <= 7; batch++ {
		for _, unsynced := range []int{0, 50, 100} {
			t.Run(fmt.Sprintf("batch %d, %d%% unsynced kept", batch, unsynced), func(t *testing.T) {
				fs := vfs.NewCrashableMem()
				copyFixture(t, fs, "db")
				var crashed *vfs.MemFS
				n := 0
				upgradeBatchDone = func() {
					if n++; n == batch {
						crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: rand.New(rand.NewPCG(uint64(batch), uint64(unsynced)))})
					}
				}
				l, err := Open("db", Options{FS: fs, Logger: discardLogger()})
				upgradeBatchDone = nil
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if key := layoutKey(t, crashed); string(key) != string([]byte{layoutV1}) && string(key) != string(layoutUpgrading) {
					t.Fatalf("after a crash mid-upgrade the layout key is %v", key)
				}
				raw := copyFS(crashed)
				if n := convertedIndex(t, raw); n > 0 && n < 25 {
					mixed = true
				}
				l, err = Open("db", Options{FS: crashed, Logger: discardLogger()})
				if err != nil {
					t.Fatalf("open after a crash mid-upgrade: %v", err)
				}
				defer l.Close()
				if got := dumpLog(t, l); got != string(want) {
					t.Fatalf("after a crash mid-upgrade and a reopen, the log reads:\n%s\nwant:\n%s", got, want)
				}
			})
		}
	}
	if !mixed {
		t.Fatal("no crash left a log half converted: the test does not test what it says")
	}
}

// convertedIndex counts the stream keys of the log in fs holding an
// 8-byte index value, through Pebble itself.
func convertedIndex(t *testing.T, fs *vfs.MemFS) int {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{discardLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{kindStream}, UpperBound: []byte{kindStream + 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		if len(it.Value()) == indexValueLen {
			n++
		}
	}
	return n
}

// TestLayout1UpgradeDamagedCopies: a layout-1 entry whose global
// copy is damaged keeps its stream copy's value; one whose stream copy is
// damaged is reported at its stream position, as before the upgrade.
func TestLayout1UpgradeDamagedCopies(t *testing.T) {
	fs := vfs.NewMem()
	copyFixture(t, fs, "db")
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{discardLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	// agent/a seq 1 is global seq 1; agent/a seq 3 is global seq 7.
	if err := db.Set(globalKey(1), []byte("damaged"), nil); err != nil {
		t.Fatal(err)
	}
	v, closer, err := db.Get(streamKey("agent/a", 3))
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), v...)
	closer.Close()
	bad[len(bad)-2] ^= 0x40
	if err := db.Set(streamKey("agent/a", 3), bad, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	l, err := Open("db", Options{FS: fs, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.Contains(logs.String(), "damaged_left=1") || !strings.Contains(logs.String(), "repaired_from_stream_copy=1") || !strings.Contains(logs.String(), "log verify") {
		t.Fatalf("the upgrade does not report the damage:\n%s", logs.String())
	}
	var seqs []uint64
	var damaged []uint64
	for e, err := range l.ReadStream("agent/a", ReadOptions{}) {
		if ce, ok := errors.AsType[*CorruptError](err); ok {
			damaged = append(damaged, ce.Seq)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	if len(seqs) != 11 || seqs[0] != 1 || !slices.Equal(damaged, []uint64{3}) {
		t.Fatalf("agent/a reads %v, damaged %v", seqs, damaged)
	}
	r, err := l.Verify(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, d := range r.Damaged {
		where = append(where, d.Position())
	}
	if !slices.Contains(where, "agent/a seq 3") {
		t.Fatalf("verify: %q", where)
	}
}

// TestNewerLayoutRefused: a log written by a newer build is refused with
// an error saying so, and left as it is.
func TestNewerLayoutRefused(t *testing.T) {
	fs := vfs.NewMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "agent/a", sig("t.x", "a1"))
	if err := l.db.Set(keyLayout, []byte{layoutVersion + 1}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open("db", Options{FS: fs})
	if err == nil || !strings.Contains(err.Error(), "newer jido-bus") || !strings.Contains(err.Error(), fmt.Sprintf("key layout %d", layoutVersion+1)) {
		t.Fatalf("open a newer log: %v", err)
	}
	if _, err = Open("db", Options{FS: fs}); err == nil || !strings.Contains(err.Error(), "newer jido-bus") {
		t.Fatalf("open it again: %v", err)
	}
}

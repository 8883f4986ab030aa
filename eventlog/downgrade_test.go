package eventlog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/go-cmp/cmp"
	"github.com/jido-bus/jido-bus/eventlog/eventlogtest"
)

// rawKeys returns every key of the log in dir "db" of fs and its value,
// read through Pebble itself (on a copy: the crash clones are kept as
// they were).
func rawKeys(t *testing.T, fs *vfs.MemFS) map[string]string {
	t.Helper()
	return eventlogtest.RawKeys(t, copyFS(fs), "db")
}

// TestDowngradeGivesBackTheOldBuildsBytes: the layout-1 fixture, upgraded
// and then downgraded, holds again exactly the keys and values the build
// that wrote it had written, and reads as that build read it.
func TestDowngradeGivesBackTheOldBuildsBytes(t *testing.T) {
	fs := vfs.NewCrashableMem()
	copyFixture(t, fs, "db")
	before := rawKeys(t, fs)
	var logs strings.Builder
	opts := Options{FS: fs, Logger: slog.New(slog.NewTextHandler(&logs, nil))}

	rep, err := MigrateLayout("db", opts, 2)
	if err != nil || rep != (MigrateReport{From: 1, To: 2, Converted: 25}) {
		t.Fatalf("migrate the fixture to layout 2: %+v, %v", rep, err)
	}
	if rep, err = MigrateLayout("db", opts, 2); err != nil || rep != (MigrateReport{From: 2, To: 2}) {
		t.Fatalf("migrate a log in layout 2 to layout 2: %+v, %v; want nothing done", rep, err)
	}
	rep, err = MigrateLayout("db", opts, 1)
	if err != nil || rep != (MigrateReport{From: 2, To: 1, Converted: 25}) {
		t.Fatalf("migrate to layout 1: %+v, %v", rep, err)
	}
	if !strings.Contains(logs.String(), "downgraded the key layout to 1") {
		t.Errorf("the downgrade does not say what it did:\n%s", logs.String())
	}
	if diff := cmp.Diff(before, rawKeys(t, fs)); diff != "" {
		t.Fatalf("upgraded and downgraded, the fixture's keys differ from what the old build wrote (-old +now):\n%s", diff)
	}
	// Asked again, a log in layout 1 goes through this build's Open (an
	// upgrade) and back: the same bytes, and From says it was in layout 1.
	if rep, err = MigrateLayout("db", opts, 1); err != nil || rep != (MigrateReport{From: 1, To: 1, Converted: 25}) {
		t.Fatalf("migrate a log in layout 1 to layout 1: %+v, %v", rep, err)
	}
	if diff := cmp.Diff(before, rawKeys(t, fs)); diff != "" {
		t.Fatalf("upgraded and downgraded, the fixture's keys differ from what the old build wrote (-old +now):\n%s", diff)
	}

	want, err := os.ReadFile(filepath.Join("testdata", "layout1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open("db", Options{FS: fs, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := dumpLog(t, l); got != string(want) {
		t.Fatalf("downgraded and opened again, the log reads:\n%s\nwant:\n%s", got, want)
	}
}

// TestDowngradeOfALogWrittenInLayout2: entries this build appended get
// their value back under their stream key; a damaged index entry is left
// as it was and counted; the log then reads as it did.
func TestDowngradeOfALogWrittenInLayout2(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	l, err := Open("db", Options{FS: fs, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		stream := fmt.Sprintf("agent/s%d", i)
		if _, err := l.Append(ctx, stream, AnyVersion, sigs("user.said", stream+"-", 4)...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.TruncateBefore(ctx, "agent/s1", 3); err != nil {
		t.Fatal(err)
	}
	before := dumpLog(t, l)
	// A damaged index entry: it names a value that is not there.
	if err := l.db.Set(streamKey("agent/s2", 2), []byte{0, 0, 0, 0, 0, 0, 0, 99}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	damagedBefore := dumpLog(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	rep, err := MigrateLayout("db", Options{FS: fs, Logger: discardLogger()}, 1)
	if err != nil || rep != (MigrateReport{From: 2, To: 1, Converted: 9, Damaged: 1}) {
		t.Fatalf("downgrade: %+v, %v; want 9 converted, 1 damaged", rep, err)
	}
	raw := rawKeys(t, fs)
	if got := raw[string(keyLayout)]; got != string([]byte{layoutV1}) {
		t.Fatalf("layout key %v after the downgrade", []byte(got))
	}
	streams := 0
	for k, v := range raw {
		if k[0] != kindStream {
			continue
		}
		streams++
		h, err := checkValue([]byte(v))
		if k == string(streamKey("agent/s2", 2)) {
			if err == nil {
				t.Errorf("the damaged index entry became a value: %x", v)
			}
			continue
		}
		if err != nil || raw[string(globalKey(h.gseq))] != v {
			t.Errorf("stream key %q: value %x is not its global copy (%v)", k, v, err)
		}
	}
	if streams != 10 {
		t.Fatalf("%d stream keys after the downgrade; want 10", streams)
	}
	if before == damagedBefore {
		t.Fatal("the damaged index entry does not show in a read: the test does not test what it says")
	}

	l, err = Open("db", Options{FS: fs, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := dumpLog(t, l); got != damagedBefore {
		t.Fatalf("downgraded and upgraded again, the log reads:\n%s\nwant:\n%s", got, damagedBefore)
	}
}

// TestDowngradeInterrupted kills the downgrade after each of its batches:
// the log is then marked being downgraded (or not yet touched), which no
// layout-1 build opens, and this build's next Open upgrades it back, after
// which it reads as before and downgrades in full.
func TestDowngradeInterrupted(t *testing.T) {
	defer func(n int) { upgradeBatchEntries, upgradeBatchDone = n, nil }(upgradeBatchEntries)
	upgradeBatchEntries = 4 // 25 entries: 7 batches
	want, err := os.ReadFile(filepath.Join("testdata", "layout1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	seed := vfs.NewCrashableMem()
	copyFixture(t, seed, "db")
	old := rawKeys(t, seed)
	if _, err := MigrateLayout("db", Options{FS: seed, Logger: discardLogger()}, 2); err != nil {
		t.Fatal(err)
	}
	mixed := false
	for batch := 1; batch <= 7; batch++ {
		for _, unsynced := range []int{0, 50, 100} {
			t.Run(fmt.Sprintf("batch %d, %d%% unsynced kept", batch, unsynced), func(t *testing.T) {
				fs := seed.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 1))})
				var crashed *vfs.MemFS
				n := 0
				upgradeBatchDone = func() {
					if n++; n == batch {
						crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: rand.New(rand.NewPCG(uint64(batch), uint64(unsynced)))})
					}
				}
				_, err := MigrateLayout("db", Options{FS: fs, Logger: discardLogger()}, 1)
				upgradeBatchDone = nil
				if err != nil {
					t.Fatal(err)
				}
				key := layoutKey(t, crashed)
				if !bytes.Equal(key, layoutDowngrading) && !bytes.Equal(key, []byte{layoutVersion}) {
					t.Fatalf("after a crash mid-downgrade the layout key is %v: a layout-1 build would read a half-done log", key)
				}
				if n := 25 - convertedIndex(t, crashed); n > 0 && n < 25 {
					mixed = true
				}
				var logs strings.Builder
				l, err := Open("db", Options{FS: crashed, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				if err != nil {
					t.Fatalf("open after a crash mid-downgrade: %v", err)
				}
				if said := strings.Contains(logs.String(), "a downgrade to key layout 1 (jido-bus log migrate) was interrupted"); said != bytes.Equal(key, layoutDowngrading) {
					t.Errorf("layout key %v; the open said it finishes an interrupted downgrade: %v\n%s", key, said, logs.String())
				}
				got := dumpLog(t, l)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if got != string(want) {
					t.Fatalf("after a crash mid-downgrade and a reopen, the log reads:\n%s\nwant:\n%s", got, want)
				}
				if _, err := MigrateLayout("db", Options{FS: crashed, Logger: discardLogger()}, 1); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(old, rawKeys(t, crashed)); diff != "" {
					t.Fatalf("downgraded again after the crash, the keys differ from the old build's (-old +now):\n%s", diff)
				}
			})
		}
	}
	if !mixed {
		t.Fatal("no crash left a log half converted: the test does not test what it says")
	}
}

// TestMigrateRefusesOtherLayouts: a layout this build does not write, and
// a directory that is not there, are refused without creating anything.
func TestMigrateRefusesOtherLayouts(t *testing.T) {
	fs := vfs.NewMem()
	if _, err := MigrateLayout("db", Options{FS: fs}, 3); err == nil || !strings.Contains(err.Error(), "writes layouts 1") {
		t.Errorf("layout 3: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "none")
	if _, err := MigrateLayout(dir, Options{}, 1); err == nil {
		t.Error("a directory that does not exist was migrated")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("migrating a missing directory made it: %v", err)
	}
}

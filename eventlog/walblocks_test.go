package eventlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
	"github.com/jido-bus/jido-bus/bus"
)

// WAL records larger than a 32 KiB block are split into chunks over
// several blocks. Pebble's own check of such a WAL relies on the synced
// offsets its writer records in each chunk, and those undercount (the
// writer does not add the full blocks it flushes), so damage in the middle
// of a WAL of large records looked like a torn tail. These tests damage
// and cut WALs of 16 KiB and 100 KiB entries.

type largeWALCase struct {
	name    string
	entries int
	pad     int // bytes of data in each entry
}

var largeWALCases = []largeWALCase{
	{"16KiB", 100, 16 << 10},
	{"100KiB", 30, 100 << 10},
}

// padSig returns a signal with the given id and pad bytes of data.
func padSig(id string, pad int) bus.Signal {
	s, err := bus.NewSignal("t.x", "test/source", map[string]string{"pad": strings.Repeat("x", pad)})
	if err != nil {
		panic(err)
	}
	s.SetID(id)
	return s
}

// writeLargeWAL appends c.entries entries (ids "1" … in order, each
// acknowledged, so synced, before the next) to a new log in "db". It
// returns the filesystem after a clean Close and a copy taken before the
// Close holding exactly what was synced, as a crash leaves it.
func writeLargeWAL(t *testing.T, c largeWALCase) (closed, crashed *vfs.MemFS) {
	t.Helper()
	fs := vfs.NewCrashableMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= c.entries; i++ {
		if _, err := l.Append(context.Background(), "agent/a", AnyVersion, padSig(fmt.Sprint(i), c.pad)); err != nil {
			t.Fatal(err)
		}
	}
	crashed = fs.CrashClone(vfs.CrashCloneCfg{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, crashed
}

// copyFS returns an identical copy of fs, so that one written log serves
// many damaged variants.
func copyFS(fs *vfs.MemFS) *vfs.MemFS {
	return fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 1))})
}

// flipAt flips n bytes of path from off (clipped to the file).
func flipAt(t *testing.T, fs vfs.FS, path string, off int64, n int) {
	t.Helper()
	data, err := readAll(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < off+int64(n) && i < int64(len(data)); i++ {
		data[i] ^= 0x5a
	}
	if err := writeSynced(fs, path, data); err != nil {
		t.Fatal(err)
	}
}

// cutAt truncates path to size bytes.
func cutAt(t *testing.T, fs vfs.FS, path string, size int64) {
	t.Helper()
	data, err := readAll(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSynced(fs, path, data[:size]); err != nil {
		t.Fatal(err)
	}
}

// recordEnds returns where each record of the newest WAL ends, as
// Pebble's own reader finds them in the undamaged file (the last end is
// where the file's clean end is).
func recordEnds(t *testing.T, fs vfs.FS) []int64 {
	t.Helper()
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: "db"})
	if err != nil || len(logs) == 0 {
		t.Fatalf("scan WALs: %v (%d)", err, len(logs))
	}
	r := logs[len(logs)-1].OpenForRead()
	defer r.Close()
	var ends []int64
	for n := 0; ; n++ {
		_, off, err := r.NextRecord()
		if n > 0 {
			ends = append(ends, off.Physical)
		}
		if errors.Is(err, io.EOF) {
			return ends
		}
		if err != nil {
			t.Fatalf("the undamaged WAL does not read: %v", err)
		}
	}
}

// openIDs opens the log on fs and returns its entries' ids, or the error.
func openIDs(t *testing.T, fs vfs.FS, opts Options) ([]string, *WALCorruptError, error) {
	t.Helper()
	opts.FS = fs
	l, err := Open("db", opts)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	return readIDs(t, l), l.WALLoss(), nil
}

// wantRefused checks that err is a *WALCorruptError naming path and a
// damaged chunk at or before last.
func wantRefused(t *testing.T, err error, path string, last int64) *WALCorruptError {
	t.Helper()
	we, ok := errors.AsType[*WALCorruptError](err)
	if !ok || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want a *WALCorruptError", err)
	}
	if we.Path != path || we.Offset < 0 || we.Chunk < we.Offset || we.Chunk > last {
		t.Fatalf("damage reported in %s at record %d, chunk %d; want %s, a chunk at or before %d", we.Path, we.Offset, we.Chunk, path, last)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprint(we.Chunk)) {
		t.Fatalf("the message names neither the file nor the offset: %v", err)
	}
	return we
}

// TestWALDamageInLargeRecordsRefusesToOpen: sixteen bytes flipped in the
// middle of the newest WAL of large records fail Open with a
// *WALCorruptError naming the file and the damaged chunk, whether the log
// was closed cleanly or the process died.
func TestWALDamageInLargeRecordsRefusesToOpen(t *testing.T) {
	for _, c := range largeWALCases {
		t.Run(c.name, func(t *testing.T) {
			closed, crashed := writeLargeWAL(t, c)
			for name, base := range map[string]*vfs.MemFS{"closed": closed, "crashed": crashed} {
				fs := copyFS(base)
				path := newestFile(t, fs, ".log")
				size := damage(t, fs, path, 16)
				ids, _, err := openIDs(t, fs, Options{})
				if err == nil {
					t.Fatalf("%s: opened a log whose WAL is damaged in the middle: %d of %d entries", name, len(ids), c.entries)
				}
				wantRefused(t, err, path, size/2+16)
			}
		})
	}
}

// TestWALTornLargeRecordsOpen: a newest WAL of large records cut anywhere
// (as a crash in the middle of a write leaves it) opens with every entry
// whose record ends before the cut.
func TestWALTornLargeRecordsOpen(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	for _, c := range largeWALCases {
		t.Run(c.name, func(t *testing.T) {
			closed, _ := writeLargeWAL(t, c)
			path := newestFile(t, closed, ".log")
			ends := recordEnds(t, closed)
			end := ends[len(ends)-1]
			cuts := []int64{32 << 10, end - 1, ends[len(ends)-2] + 5}
			for range 5 {
				cuts = append(cuts, 1+rng.Int64N(end-1))
			}
			for _, cut := range cuts {
				fs := copyFS(closed)
				cutAt(t, fs, path, cut)
				ids, _, err := openIDs(t, fs, Options{})
				if err != nil {
					t.Fatalf("cut at %d: a torn tail must open: %v", cut, err)
				}
				checkPrefix(t, ids)
				lost := 0
				for _, e := range ends {
					if e > cut {
						lost++
					}
				}
				if len(ids) != c.entries-lost {
					t.Fatalf("cut at %d: %d entries, want %d (%d records cut)", cut, len(ids), c.entries-lost, lost)
				}
			}
		})
	}
}

// TestWALDamageInLargeRecordsAccepted: with AcceptWALLoss the log opens
// with exactly the entries whose records lie before the damaged one.
func TestWALDamageInLargeRecordsAccepted(t *testing.T) {
	for _, c := range largeWALCases {
		t.Run(c.name, func(t *testing.T) {
			closed, _ := writeLargeWAL(t, c)
			ends := recordEnds(t, closed)
			fs := copyFS(closed)
			path := newestFile(t, fs, ".log")
			damage(t, fs, path, 16)
			l, err := Open("db", Options{FS: fs, AcceptWALLoss: true})
			if err != nil {
				t.Fatalf("open accepting the loss: %v", err)
			}
			defer l.Close()
			loss := l.WALLoss()
			if loss == nil || loss.Path != path || loss.SavedTo == "" {
				t.Fatalf("loss = %+v", loss)
			}
			dropped := 0
			for _, e := range ends {
				if e > loss.Offset {
					dropped++
				}
			}
			ids := readIDs(t, l)
			checkPrefix(t, ids)
			if dropped == 0 || len(ids) != c.entries-dropped {
				t.Fatalf("%d entries after dropping the WAL from %d, want %d", len(ids), loss.Offset, c.entries-dropped)
			}
			res := mustAppend(t, l, "agent/a", sig("t.x", "after"))
			if res.Version != uint64(len(ids))+1 {
				t.Fatalf("append after the loss got version %d, want %d", res.Version, len(ids)+1)
			}
		})
	}
}

// TestWALDamageNeverSilent flips sixteen bytes at seeded random places of
// the newest WAL: either Open refuses, naming the file and a chunk at or
// before the flip, or every acknowledged entry is there. After a crash
// (no clean close), damage to the last records cannot be told from a
// write the crash tore (nothing after it proves it was synced): there at
// most the last three records may go, never more.
func TestWALDamageNeverSilent(t *testing.T) {
	const trailer = 11 // the end-of-log chunk a clean close writes
	rng := rand.New(rand.NewPCG(5, 9))
	for _, c := range largeWALCases {
		t.Run(c.name, func(t *testing.T) {
			closed, crashed := writeLargeWAL(t, c)
			for _, v := range []struct {
				name  string
				base  *vfs.MemFS
				tail  int64 // bytes at the end left alone
				blind int   // entries that may go silently
			}{{"closed", closed, trailer, 0}, {"crashed", crashed, 0, 3}} {
				path := newestFile(t, v.base, ".log")
				st, err := v.base.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				for range 8 {
					pos := rng.Int64N(st.Size() - v.tail - 16)
					fs := copyFS(v.base)
					flipAt(t, fs, path, pos, 16)
					ids, _, err := openIDs(t, fs, Options{})
					if err != nil {
						wantRefused(t, err, path, pos+16)
						continue
					}
					checkPrefix(t, ids)
					if len(ids) < c.entries-v.blind {
						t.Fatalf("%s, flip at %d of %d: opened with %d of %d entries", v.name, pos, st.Size(), len(ids), c.entries)
					}
				}
			}
		})
	}
}

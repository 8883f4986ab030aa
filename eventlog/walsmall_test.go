package eventlog

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
)

// A newest WAL smaller than one 32 KiB block: the case an operator meets
// after a few calls and a kill -9. Two things hid damage there: the first
// WAL of a new directory had no synced offsets at all (Pebble writes it
// before raising the format), and when the damaged bytes hit a chunk's
// header its frame was lost and the scan skipped to the next block,
// which a one-block WAL does not have.

// writeSmallWAL makes calls acknowledged appends of three small entries
// each (as counter calls leave them; each synced before the next) to a new
// log in "db" and returns the filesystem as a crash (kill -9) leaves it:
// exactly what was synced, no end-of-log chunk.
func writeSmallWAL(t *testing.T, calls int) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewCrashableMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < calls; i++ {
		batch := []bus.Signal{sig("t.x", fmt.Sprint(3*i+1)), sig("t.x", fmt.Sprint(3*i+2)), sig("t.x", fmt.Sprint(3*i+3))}
		if _, err := l.Append(context.Background(), "agent/a", AnyVersion, batch...); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return crashed
}

// TestSmallWALDamageRefusesToOpen flips sixteen bytes at every offset of
// the middle half of a crashed one-block WAL, headers and payloads
// alike: each must fail Open naming the file and a chunk at or before
// the flip, as valid synced records follow the damage in the same block.
func TestSmallWALDamageRefusesToOpen(t *testing.T) {
	for _, c := range []struct {
		name   string
		calls  int
		blocks int64
	}{{"one block", 30, 1}, {"two blocks", 70, 2}} {
		t.Run(c.name, func(t *testing.T) {
			base := writeSmallWAL(t, c.calls)
			path := newestFile(t, base, ".log")
			st, err := base.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if blocks := (st.Size() + walBlockSize - 1) / walBlockSize; blocks != c.blocks {
				t.Fatalf("the WAL is %d bytes: want %d blocks", st.Size(), c.blocks)
			}
			for pos := st.Size() / 4; pos < st.Size()*3/4; pos += 7 {
				fs := copyFS(base)
				flipAt(t, fs, path, pos, 16)
				ids, _, err := openIDs(t, fs, Options{})
				if err == nil {
					t.Fatalf("flip at %d of %d: opened with %d of %d acknowledged entries", pos, st.Size(), len(ids), 3*c.calls)
				}
				wantRefused(t, err, path, pos+16)
			}
		})
	}
}

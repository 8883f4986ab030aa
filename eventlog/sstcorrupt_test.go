package eventlog

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestTableDamageIsAnError: a flipped byte in a table (.sst) is reported
// as an error naming the file (wrapping ErrCorrupt) to the read that meets
// it; Pebble's report of it does not end the process.
func TestTableDamageIsAnError(t *testing.T) {
	fs := vfs.NewMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		mustAppend(t, l, "agent/a", sigs("t.x", fmt.Sprintf("b%d-", i), 100)...)
	}
	if err := l.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sst := newestFile(t, fs, ".sst")
	flipEvery(t, fs, sst, 4096)

	l, err = Open("db", Options{FS: fs})
	if err != nil {
		// Refusing to open is fine too, if it says why.
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fs.PathBase(sst)) {
			t.Fatalf("open: %v, want ErrCorrupt naming %s", err, sst)
		}
		return
	}
	defer l.Close()
	// Each entry is stored under its stream key and its global key: read
	// both ranges, one of which holds the damaged block.
	var readErr error
	for _, entries := range []iter.Seq2[Entry, error]{l.ReadAll(ReadOptions{}), l.ReadStream("agent/a", ReadOptions{})} {
		for _, err := range entries {
			if err != nil && readErr == nil {
				readErr = err
			}
		}
	}
	if readErr == nil {
		t.Fatal("read the whole log from a damaged table without an error")
	}
	if !errors.Is(readErr, ErrCorrupt) || !strings.Contains(readErr.Error(), fs.PathBase(sst)) {
		t.Fatalf("read: %v, want ErrCorrupt naming %s", readErr, sst)
	}
}

// flipEvery flips one byte in every step bytes of the first half of path,
// so that data blocks of every key range are damaged.
func flipEvery(t *testing.T, fs vfs.FS, path string, step int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	for off := step / 2; off < st.Size()/2; off += step {
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x10
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

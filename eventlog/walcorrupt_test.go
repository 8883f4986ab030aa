package eventlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walEntries is how many single-event appends the WAL tests write: each
// is one WAL record, so that the middle of the WAL has many records after
// it.
const walEntries = 3000

// writeWAL writes walEntries appends (each synced) to a new log in "db" on
// fs and closes it; they stay in the WAL, not yet flushed to a table.
func writeWAL(t *testing.T, fs vfs.FS) {
	t.Helper()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= walEntries; i++ {
		if _, err := l.Append(context.Background(), "agent/a", AnyVersion, sig("t.x", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// newestFile returns the path of the newest file in "db" with the suffix.
func newestFile(t *testing.T, fs vfs.FS, suffix string) string {
	t.Helper()
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		t.Fatalf("no %s file in db: %v", suffix, names)
	}
	slices.Sort(found)
	return fs.PathJoin("db", found[len(found)-1])
}

// damage flips n bytes of path starting at the middle of the file and
// returns the file's size.
func damage(t *testing.T, fs vfs.FS, path string, n int) int64 {
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
	buf := make([]byte, n)
	mid := st.Size() / 2
	if _, err := f.ReadAt(buf, mid); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] ^= 0x5a
	}
	if _, err := f.WriteAt(buf, mid); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// readIDs reads the whole global log; it fails the test on any error.
func readIDs(t *testing.T, l *Log) []string {
	t.Helper()
	var ids []string
	for _, e := range collect(t, l.ReadAll(ReadOptions{})) {
		ids = append(ids, e.Event.ID())
	}
	return ids
}

// checkPrefix checks that ids are "1", "2", … with no gap.
func checkPrefix(t *testing.T, ids []string) {
	t.Helper()
	for i, id := range ids {
		if id != fmt.Sprint(i+1) {
			t.Fatalf("entry %d is %s: not a gapless prefix", i, id)
		}
	}
}

// TestWALDamageRefusesToOpen: bytes flipped in the middle of the newest
// WAL, with valid records after them, are damage, not a torn tail: Open
// fails with a *WALCorruptError naming the file and offset, and changes
// nothing.
func TestWALDamageRefusesToOpen(t *testing.T) {
	fs := vfs.NewMem()
	writeWAL(t, fs)
	wal := newestFile(t, fs, ".log")
	size := damage(t, fs, wal, 16)

	l, err := Open("db", Options{FS: fs})
	if err == nil {
		n := len(readIDs(t, l))
		l.Close()
		t.Fatalf("opened a log whose WAL is damaged in the middle (%d of %d entries readable)", n, walEntries)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	we, ok := errors.AsType[*WALCorruptError](err)
	if !ok {
		t.Fatalf("err = %v, want a *WALCorruptError", err)
	}
	if we.Path != wal || we.Offset <= 0 || we.Offset > size/2 {
		t.Fatalf("damage reported in %s at %d, want %s before %d", we.Path, we.Offset, wal, size/2)
	}
	if !strings.Contains(err.Error(), wal) || !strings.Contains(err.Error(), fmt.Sprint(we.Offset)) {
		t.Fatalf("the message names neither the file nor the offset: %v", err)
	}
	// Nothing was changed: it fails the same way again.
	if _, err2 := Open("db", Options{FS: fs}); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("second open: %v", err2)
	}
}

// TestWALTornTailOpens: a WAL that only ends early (a write torn by a
// crash) opens with the entries before the cut.
func TestWALTornTailOpens(t *testing.T) {
	fs := vfs.NewMem()
	writeWAL(t, fs)
	wal := newestFile(t, fs, ".log")
	f, err := fs.OpenReadWrite(wal, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	// Cut in the middle of the last records, as a crash mid-write does.
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cut := int64(bytes.LastIndex(data, []byte(`"2999"`))) // inside the record of entry 2999
	if cut <= 0 {
		t.Fatal("entry 2999 not found in the WAL")
	}
	g, err := fs.Create(wal, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Write(data[:cut]); err != nil {
		t.Fatal(err)
	}
	g.Close()

	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatalf("a torn tail must open: %v", err)
	}
	defer l.Close()
	ids := readIDs(t, l)
	checkPrefix(t, ids)
	if len(ids) != 2998 {
		t.Fatalf("%d entries after a cut inside entry 2999, want 2998", len(ids))
	}
	if r, err := l.Verify(context.Background(), nil); err != nil || !r.OK() {
		t.Fatalf("verify: %v %v", err, r.Damaged)
	}
}

// TestWALDamageAccepted: with AcceptWALLoss the log opens with the entries
// before the damage, reports the loss, keeps a copy of what it dropped and
// takes appends again.
func TestWALDamageAccepted(t *testing.T) {
	fs := vfs.NewMem()
	writeWAL(t, fs)
	wal := newestFile(t, fs, ".log")
	damage(t, fs, wal, 16)

	l, err := Open("db", Options{FS: fs, AcceptWALLoss: true})
	if err != nil {
		t.Fatalf("open accepting the loss: %v", err)
	}
	defer l.Close()
	loss := l.WALLoss()
	if loss == nil || loss.Path != wal || loss.Offset <= 0 || loss.SavedTo == "" {
		t.Fatalf("loss = %+v", loss)
	}
	if _, err := fs.Stat(loss.SavedTo); err != nil {
		t.Fatalf("the damaged WAL was not kept: %v", err)
	}
	ids := readIDs(t, l)
	checkPrefix(t, ids)
	if len(ids) == 0 || len(ids) >= walEntries {
		t.Fatalf("%d entries after accepting the loss of the WAL's second half", len(ids))
	}
	if r, err := l.Verify(context.Background(), nil); err != nil || !r.OK() {
		t.Fatalf("verify: %v %v", err, r.Damaged)
	}
	res := mustAppend(t, l, "agent/a", sig("t.x", "after"))
	if res.Version != uint64(len(ids))+1 {
		t.Fatalf("append after the loss got version %d, want %d", res.Version, len(ids)+1)
	}
}

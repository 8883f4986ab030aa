package eventlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// mixedWALs writes entries of 200 B to 100 KiB to a new log, closes it and
// returns the bytes and number of its newest WAL and the bytes of an
// older one (another log number, as a recycled file's stale tail holds).
func mixedWALs(t *testing.T) (newest []byte, num uint32, older []byte) {
	t.Helper()
	fs := vfs.NewMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{200, 5 << 10, 40 << 10, 100 << 10, 300}
	for i := 1; i <= 40; i++ {
		if _, err := l.Append(context.Background(), "agent/a", AnyVersion, padSig(fmt.Sprint(i), sizes[i%len(sizes)])); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: "db"})
	if err != nil || len(logs) < 2 {
		t.Fatalf("want two WALs or more: %v, %d", err, len(logs))
	}
	read := func(ll wal.LogicalLog) []byte {
		_, p := ll.SegmentLocation(0)
		b, err := readAll(fs, p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	newestLog := logs[len(logs)-1]
	return read(newestLog), uint32(newestLog.Num), read(logs[0])
}

// pebbleReads replays the WAL bytes data, numbered num, as Pebble's Open
// does and returns the records it reads and whether it reached a clean end.
func pebbleReads(t *testing.T, data []byte, num uint32) (int, bool) {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll("w", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeSynced(fs, fs.PathJoin("w", fmt.Sprintf("%06d.log", num)), data); err != nil {
		t.Fatal(err)
	}
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: "w"})
	if err != nil || len(logs) != 1 {
		t.Fatalf("scan: %v %d", err, len(logs))
	}
	r := logs[0].OpenForRead()
	defer r.Close()
	for n := 0; ; n++ {
		_, _, err := r.NextRecord()
		if errors.Is(err, io.EOF) {
			return n, true
		}
		if err != nil {
			if !record.IsInvalidRecord(err) && !errors.Is(err, record.ErrInvalidChunk) && !errors.Is(err, record.ErrZeroedChunk) {
				t.Fatalf("replay: %v", err)
			}
			return n, false
		}
	}
}

// TestScanWALStopsWherePebbleStops damages a WAL in the ways disks and
// crashes do and checks that the scan stops at the record Pebble's replay
// stops at (so it never calls damage what Pebble reads), and that what a
// crash leaves (a cut, zeroes or another log's stale chunks after the
// end, junk after the last record) is never taken for damage.
func TestScanWALStopsWherePebbleStops(t *testing.T) {
	data, num, older := mixedWALs(t)
	rng := rand.New(rand.NewPCG(3, 3))
	type mutation struct {
		name  string
		crash bool // models what a crash leaves: must not be refused
		apply func(pos int) []byte
	}
	flip := func(n int) func(int) []byte {
		return func(pos int) []byte {
			b := bytes.Clone(data)
			for i := pos; i < pos+n && i < len(b); i++ {
				b[i] ^= byte(1 + rng.IntN(255))
			}
			return b
		}
	}
	mutations := []mutation{
		{"flip16", false, flip(16)},
		{"flip1", false, flip(1)},
		{"cut", true, func(pos int) []byte { return bytes.Clone(data[:pos]) }},
		{"zeroes", true, func(pos int) []byte {
			// A preallocated file: zeroes past the last write.
			return append(bytes.Clone(data[:pos]), make([]byte, walBlockSize+walBlockSize-pos%walBlockSize)...)
		}},
		{"stale", true, func(pos int) []byte {
			b := bytes.Clone(data[:pos])
			if pos < len(older) {
				b = append(b, older[pos:]...)
			}
			return b
		}},
		{"junk", true, func(int) []byte {
			junk := make([]byte, 1+rng.IntN(40000))
			for i := range junk {
				junk[i] = byte(rng.Uint32())
			}
			return append(bytes.Clone(data[:len(data)-walRecycleHeader]), junk...)
		}},
	}
	// Few cases of each: Pebble's reader spends about a tenth of a second
	// looking for a single flipped bit in each chunk that fails its
	// checksum.
	for _, m := range mutations {
		for range 8 {
			pos := rng.IntN(len(data))
			b := m.apply(pos)
			want, clean := pebbleReads(t, b, num)
			stop, err := scanWALFile(bytes.NewReader(b), num)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case clean && stop != nil:
				t.Fatalf("%s at %d: Pebble reads all %d records, the scan stops after %d at %d: %s", m.name, pos, want, stop.records, stop.chunk, stop.reason)
			case !clean && stop == nil:
				t.Fatalf("%s at %d: Pebble stops after %d records, the scan reads to the end", m.name, pos, want)
			case !clean && stop.records != want:
				t.Fatalf("%s at %d: Pebble stops after %d records, the scan after %d (%s)", m.name, pos, want, stop.records, stop.reason)
			case m.crash && stop != nil && stop.proof != "":
				t.Fatalf("%s at %d: what a crash leaves was taken for damage: %s; %s", m.name, pos, stop.reason, stop.proof)
			}
		}
	}
}

// writeRecords writes records of the given payload sizes (at least 12
// bytes) with Pebble's WAL writer, for log 0, and returns the file's bytes
// (closed cleanly). Each payload begins as a batch does, with a rising
// sequence number and a count of one, for the replay reads batches.
func writeRecords(t testing.TB, sizes ...int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := record.NewLogWriter(&buf, 0, record.LogWriterConfig{
		QueueSemChan:        make(chan struct{}, 1),
		WriteWALSyncOffsets: func() bool { return true },
	})
	for i, n := range sizes {
		p := bytes.Repeat([]byte{'r'}, n)
		binary.LittleEndian.PutUint64(p, uint64(i+1))
		binary.LittleEndian.PutUint32(p[8:], 1)
		if _, err := w.WriteRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestScanWALBlockEnds: where a record leaves fewer bytes than a header at
// the end of a block, the writer pads them with zeroes. The scan treats
// every such remainder, zeroed or not, as Pebble's replay does.
func TestScanWALBlockEnds(t *testing.T) {
	for rem := 1; rem < walSyncHeader; rem++ {
		data := writeRecords(t, walBlockSize-walSyncHeader-rem, 100, 40000, 12)
		check := func(b []byte, what string) {
			want, clean := pebbleReads(t, b, 0)
			stop, err := scanWALFile(bytes.NewReader(b), 0)
			if err != nil {
				t.Fatal(err)
			}
			if clean != (stop == nil) || (stop != nil && stop.records != want) {
				t.Fatalf("%d bytes left in the block, %s: Pebble reads %d records (clean end %v), the scan stops at %+v", rem, what, want, clean, stop)
			}
		}
		check(data, "zeroed")
		for i := walBlockSize - rem; i < walBlockSize; i++ {
			for _, v := range []byte{1, 9, 0x5a} {
				b := bytes.Clone(data)
				b[i] = v
				check(b, fmt.Sprintf("byte %d set to %d", i, v))
			}
		}
	}
}

// BenchmarkScanWAL measures the scan Open makes of the newest WAL, on a
// WAL of 64 MiB (the memtable's size, so the largest a WAL grows to), and
// for comparison Pebble's own read of it when it replays.
func BenchmarkScanWAL(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "000007.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := record.NewLogWriter(f, 7, record.LogWriterConfig{
		QueueSemChan:        make(chan struct{}, 1),
		WriteWALSyncOffsets: func() bool { return true },
	})
	rec := bytes.Repeat([]byte("0123456789abcdef"), 1<<10) // 16 KiB records
	for written := 0; written < 64<<20; written += len(rec) {
		if _, err := w.WriteRecord(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			stop, err := scanWALPath(vfs.Default, path, 7)
			if err != nil || stop != nil {
				b.Fatalf("%v %+v", err, stop)
			}
		}
	})
	b.Run("pebble-replay-read", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			logs, err := wal.Scan(wal.Dir{FS: vfs.Default, Dirname: dir})
			if err != nil || len(logs) != 1 {
				b.Fatal(err)
			}
			r := logs[0].OpenForRead()
			for {
				_, _, err := r.NextRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			r.Close()
		}
	})
}

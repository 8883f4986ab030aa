package eventlog

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// Damage in the write-ahead log.
//
// Pebble replays its WAL when it opens. A record that ends early at the end
// of the newest WAL is a write torn by a crash: it was never acknowledged
// (acknowledgement waits for the fsync), and Pebble ignores it. A damaged
// record followed by records that were synced after it is different: the
// records after it were acknowledged, and stopping the replay there would
// lose them without a word. The log writes the WAL in a format that records,
// in each chunk, how far the file had been synced (FormatWALSyncChunks), so
// that the two can be told apart. Pebble's own check of the newest WAL
// misses damage among records larger than a block, so Open reads the
// newest WAL itself first (walscan.go), holding the directory's lock; on
// damage Open fails with a *WALCorruptError, unless Options.AcceptWALLoss
// says to keep the records before the damage and drop the rest.

// WALCorruptError reports a write-ahead log file damaged before its end:
// the records from Offset on are unreadable or come after the damage, and
// acknowledged entries may be among them. It wraps ErrCorrupt.
//
// Without Options.AcceptWALLoss, Open returns it and changes nothing. With
// it, Open keeps the records before Offset, moves the rest aside (the
// damaged file whole, and every later WAL file) into SavedTo, opens, and
// Log.WALLoss returns it.
type WALCorruptError struct {
	Path   string // the damaged WAL file
	Offset int64  // where the first record that cannot be replayed begins
	Chunk  int64  // where the damaged chunk begins (Offset or later, inside that record)
	Reason string // what the reader found there
	// Filled in when the loss was accepted:
	SavedTo      string   // directory holding the original damaged file and the later ones
	Dropped      []string // the later WAL files moved aside whole
	DroppedBytes int64    // bytes of WAL not replayed: the damaged file's rest and the later files
}

func (e *WALCorruptError) Error() string {
	where := fmt.Sprintf("offset %d", e.Chunk)
	if e.Chunk != e.Offset {
		where += fmt.Sprintf(" (in the record that begins at offset %d)", e.Offset)
	}
	if e.SavedTo != "" {
		return fmt.Sprintf("write-ahead log %s is damaged at %s (%s): %v; the entries from offset %d on were dropped (%d bytes of WAL), the originals are in %s",
			e.Path, where, e.Reason, ErrCorrupt, e.Offset, e.DroppedBytes, e.SavedTo)
	}
	return fmt.Sprintf("write-ahead log %s is damaged at %s, before its end (%s): %v; "+
		"acknowledged entries after it would be lost, so the log does not open: restore the data directory from a backup, "+
		"or accept the loss (serve --accept-wal-loss, Options.AcceptWALLoss) to open it with the entries before the damage",
		e.Path, where, e.Reason, ErrCorrupt)
}

func (e *WALCorruptError) Unwrap() error { return ErrCorrupt }

// WALLoss returns the damage accepted when the Log was opened with
// Options.AcceptWALLoss, or nil when the WAL was intact.
func (l *Log) WALLoss() *WALCorruptError { return l.walLoss }

// maxSalvages bounds the WAL files Open drops damage from before giving
// up; one is the rule, as everything after the first damage is dropped.
const maxSalvages = 4

// openPebble opens Pebble on dir. A damaged WAL fails with a
// *WALCorruptError or, with opts.AcceptWALLoss, is salvaged and the
// database opened; the salvage is returned. The directory's lock is taken
// before the WAL is read, so that no other process writes it meanwhile,
// and handed to Pebble; the caller closes it after the database.
func openPebble(dir string, po *pebble.Options, opts Options) (*pebble.DB, *pebble.Lock, *WALCorruptError, error) {
	if err := po.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	lock, err := pebble.LockDirectory(dir, po.FS)
	if err != nil {
		return nil, nil, nil, err
	}
	po.Lock = lock
	db, loss, err := openLocked(dir, po, opts)
	if err != nil {
		_ = lock.Close()
		return nil, nil, loss, err
	}
	return db, lock, loss, nil
}

// openLocked is openPebble once the lock is held.
func openLocked(dir string, po *pebble.Options, opts Options) (*pebble.DB, *WALCorruptError, error) {
	var loss *WALCorruptError
	for range maxSalvages {
		// Pebble would take damage in the newest WAL among records larger
		// than a block for a torn tail (walscan.go), and drop what follows.
		damage, err := scanNewestWAL(po.FS, dir)
		if err != nil {
			return nil, loss, fmt.Errorf("read the newest write-ahead log: %w", err)
		}
		if damage != nil {
			if !opts.AcceptWALLoss {
				return nil, loss, damage
			}
			if err := salvageWAL(po.FS, dir, damage); err != nil {
				return nil, loss, fmt.Errorf("accept the loss of %s after offset %d: %w", damage.Path, damage.Offset, err)
			}
			loss = damage
			continue
		}
		desc, err := pebble.Peek(dir, po.FS)
		if err != nil {
			return nil, loss, metadataDamage(dir, err)
		}
		db, err := pebble.Open(dir, po)
		if err == nil {
			if err := ensureWALSyncOffsets(db, desc); err != nil {
				_ = db.Close()
				return nil, loss, err
			}
			return db, loss, nil
		}
		// Pebble marks replay damage with its ErrCorruption, a mark the
		// standard errors package cannot see; the detail naming the WAL
		// says it was the replay that failed, and reading that WAL as the
		// replay does says whether it is damaged.
		num, ok := replayedWAL(err)
		if !ok {
			return nil, loss, metadataDamage(dir, err)
		}
		damage, derr := findWALDamage(po.FS, dir, num)
		if derr != nil {
			return nil, loss, fmt.Errorf("%w (looking for damage in WAL %d: %v)", err, num, derr)
		}
		if damage == nil {
			return nil, loss, err
		}
		if !opts.AcceptWALLoss {
			return nil, loss, damage
		}
		if err := salvageWAL(po.FS, dir, damage); err != nil {
			return nil, loss, fmt.Errorf("accept the loss of %s after offset %d: %w", damage.Path, damage.Offset, err)
		}
		loss = damage
	}
	return nil, loss, fmt.Errorf("%w: the write-ahead log is still damaged after dropping %d damaged parts", ErrCorrupt, maxSalvages)
}

// ensureWALSyncOffsets starts a new WAL when the one Pebble just created
// lacks synced offsets. Pebble creates the WAL of an Open before it raises
// the format to po.FormatMajorVersion, so the first WAL of a new
// directory (or of one written in an older format) is in the recyclable
// format, whose chunks say nothing of how far the file was synced: damage
// in it would read as a torn tail, with nothing after it to prove
// otherwise, and replay would drop every acknowledged entry after the
// damage. A flush moves to a new WAL, written in the format now in force.
func ensureWALSyncOffsets(db *pebble.DB, before *pebble.DBDesc) error {
	if before.Exists && before.FormatMajorVersion >= pebble.FormatWALSyncChunks {
		return nil
	}
	if err := db.Flush(); err != nil {
		return fmt.Errorf("start a write-ahead log with synced offsets: %w", err)
	}
	return nil
}

// metadataDamage marks an open that failed on a damaged MANIFEST (or
// another file Pebble reads before any entry) as ErrCorrupt, with what to
// do: such damage cannot be salvaged here, and log verify reports it as
// damage (exit 2) rather than as a check that could not run. Other errors
// are returned as they are.
func metadataDamage(dir string, err error) error {
	if !pebble.IsCorruptionError(err) {
		return err
	}
	return fmt.Errorf("%w: %v: the log's metadata is damaged and cannot be repaired in place; restore %s from a backup (or keep it for analysis and start a new data dir)", ErrCorrupt, err, dir)
}

// replayedWAL returns the number of the WAL whose replay failed, from the
// detail Pebble attaches to the error ("replaying wal 5, offset …").
func replayedWAL(err error) (wal.NumWAL, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		d, ok := e.(interface{ ErrorDetail() string })
		if !ok {
			continue
		}
		var n uint64
		if _, err := fmt.Sscanf(d.ErrorDetail(), "replaying wal %d,", &n); err == nil {
			return wal.NumWAL(n), true
		}
	}
	return 0, false
}

// findWALDamage reads WAL num in dir as Pebble's replay does and returns
// where it is damaged, or nil if it reads to its end (or to a torn tail).
func findWALDamage(fs vfs.FS, dir string, num wal.NumWAL) (*WALCorruptError, error) {
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil {
		return nil, err
	}
	ll, ok := logs.Get(num)
	if !ok {
		return nil, fmt.Errorf("WAL %d not found", num)
	}
	newest := logs[len(logs)-1].Num == num
	r := ll.OpenForRead()
	defer r.Close()
	for {
		_, off, err := r.NextRecord()
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF):
			return nil, nil
		case errors.Is(err, record.ErrUnexpectedEOF) && newest:
			return nil, nil // a torn tail
		case errors.Is(err, record.ErrUnexpectedEOF), errors.Is(err, record.ErrInvalidChunk),
			errors.Is(err, record.ErrZeroedChunk), errors.Is(err, pebble.ErrCorruption):
			reason := err.Error()
			if errors.Is(err, record.ErrUnexpectedEOF) {
				reason = "a WAL that was closed ends early"
			}
			d := &WALCorruptError{Path: off.PhysicalFile, Offset: off.Physical, Chunk: off.Physical, Reason: reason}
			// The replay names the record; the scan finds the chunk in it.
			if stop, err := scanWALPath(fs, d.Path, uint32(num)); err == nil && stop != nil && stop.record == d.Offset {
				d.Chunk = stop.chunk
			}
			return d, nil
		default:
			return nil, err
		}
	}
}

// scanNewestWAL reads the newest WAL in dir chunk by chunk (walscan.go)
// and returns its damage, or nil when every file of it reads to its end or
// to a torn tail.
func scanNewestWAL(fs vfs.FS, dir string) (*WALCorruptError, error) {
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil || len(logs) == 0 {
		return nil, err
	}
	ll := logs[len(logs)-1]
	for i := range ll.NumSegments() {
		sfs, path := ll.SegmentLocation(i)
		stop, err := scanWALPath(sfs, path, uint32(ll.Num))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if stop != nil && stop.proof != "" {
			return &WALCorruptError{Path: path, Offset: stop.record, Chunk: stop.chunk, Reason: stop.reason + "; " + stop.proof}, nil
		}
	}
	return nil, nil
}

// scanWALPath is scanWALFile on the file at path.
func scanWALPath(fs vfs.FS, path string, num uint32) (*walStop, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scanWALFile(f, num)
}

// salvageWAL keeps the records of d.Path before d.Offset and moves the
// rest aside: a copy of the whole damaged file and every later WAL go to a
// new directory beside dir, and the damaged file is replaced by its intact
// prefix (written to a temporary file, synced and renamed over it).
func salvageWAL(fs vfs.FS, dir string, d *WALCorruptError) error {
	saved := fs.PathJoin(fs.PathDir(dir), fs.PathBase(dir)+"-damaged-wal", time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := fs.MkdirAll(saved, 0o755); err != nil {
		return err
	}
	data, err := readAll(fs, d.Path)
	if err != nil {
		return err
	}
	if d.Offset > int64(len(data)) {
		return fmt.Errorf("offset %d is past the end of the file (%d bytes)", d.Offset, len(data))
	}
	if err := writeSynced(fs, fs.PathJoin(saved, fs.PathBase(d.Path)), data); err != nil {
		return err
	}
	d.DroppedBytes = int64(len(data)) - d.Offset
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil {
		return err
	}
	var damagedNum wal.NumWAL
	for _, ll := range logs {
		for i := range ll.NumSegments() {
			if _, p := ll.SegmentLocation(i); p == d.Path {
				damagedNum = ll.Num
			}
		}
	}
	for _, ll := range logs {
		if ll.Num <= damagedNum {
			continue
		}
		for i := range ll.NumSegments() {
			_, p := ll.SegmentLocation(i)
			if st, err := fs.Stat(p); err == nil {
				d.DroppedBytes += st.Size()
			}
			if err := fs.Rename(p, fs.PathJoin(saved, fs.PathBase(p))); err != nil {
				return err
			}
			d.Dropped = append(d.Dropped, p)
		}
	}
	tmp := d.Path + ".salvage"
	if err := writeSynced(fs, tmp, data[:d.Offset]); err != nil {
		return err
	}
	if err := fs.Rename(tmp, d.Path); err != nil {
		return err
	}
	if err := syncDir(fs, dir); err != nil {
		return err
	}
	d.SavedTo = saved
	return nil
}

func readAll(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeSynced writes data to a new file at path and syncs it. It writes a
// copy: Pebble's in-memory filesystem, in race and invariant builds,
// scribbles over what it was given to write, and salvageWAL writes the
// same bytes twice.
func writeSynced(fs vfs.FS, path string, data []byte) error {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(slices.Clone(data)); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

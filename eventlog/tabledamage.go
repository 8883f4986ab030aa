package eventlog

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// TableCorruptError reports a damaged Pebble file (a table, .sst) met by a
// read: a block failed its checksum. Every entry stored in that block
// (under its stream key, its global key, or both) cannot be read, and
// reads over it fail; the rest of the log reads. It wraps ErrCorrupt and
// Pebble's error.
type TableCorruptError struct {
	Path string // the damaged file
	Err  error  // Pebble's report
}

func (e *TableCorruptError) Error() string {
	return fmt.Sprintf("%v: file %s of the event log is damaged (%v); "+
		"`jido-bus log verify` lists what reads, `jido-bus log export` saves it; restore the data directory from a backup",
		ErrCorrupt, e.Path, e.Err)
}

func (e *TableCorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// noteDamagedFile is Pebble's DataCorruption event: it records the path
// so that the read that met the damage can name it, and logs it once.
func (l *Log) noteDamagedFile(info pebble.DataCorruptionInfo) {
	l.damageMu.Lock()
	defer l.damageMu.Unlock()
	if l.damagedFiles == nil {
		l.damagedFiles = make(map[string]bool)
	}
	if !l.damagedFiles[info.Path] {
		l.damagedFiles[info.Path] = true
		l.logger().Error("event log: a file is damaged", "path", info.Path, "err", fmt.Sprint(info.Details))
	}
}

// storageError names the damaged file in a read error that Pebble raised
// for it (its message names the file by number: "file 000007").
func (l *Log) storageError(err error) error {
	if err == nil {
		return nil
	}
	l.damageMu.Lock()
	defer l.damageMu.Unlock()
	msg := err.Error()
	for path := range l.damagedFiles {
		base := path[strings.LastIndexAny(path, `/\`)+1:]
		num := strings.TrimSuffix(base, ".sst")
		if strings.Contains(msg, "file "+num) || strings.Contains(msg, base) {
			return &TableCorruptError{Path: path, Err: err}
		}
	}
	return err
}

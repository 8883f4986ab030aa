package eventlogtest

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// RawKeys returns every key of the Pebble database in dir of fs (nil: the
// disk) and its value, read as any Pebble reader would, without the event
// log's code: what a build of another layout finds there. The database is
// opened read-only, so a committed fixture stays as it is.
func RawKeys(tb testing.TB, fs vfs.FS, dir string) map[string]string {
	tb.Helper()
	if fs == nil {
		fs = vfs.Default
	}
	db, err := pebble.Open(dir, &pebble.Options{ReadOnly: true, FS: fs, Logger: quietLogger{}})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	it, err := db.NewIter(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer it.Close()
	out := map[string]string{}
	for valid := it.First(); valid; valid = it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	if err := it.Error(); err != nil {
		tb.Fatal(err)
	}
	return out
}

package eventlog

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestManifestDamageIsCorrupt: a damaged MANIFEST stops the open as
// ErrCorrupt (log verify: damage, exit 2) saying to restore from a
// backup, not as an error that reads like a failure to run the check.
func TestManifestDamageIsCorrupt(t *testing.T) {
	fs := vfs.NewMem()
	l, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustAppend(t, l, "agent/a", sigs("t.x", fmt.Sprintf("b%d-", i), 10)...)
		// Each flush adds a table: a MANIFEST edit to damage.
		if err := l.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var manifest string
	for _, name := range mustList(t, fs) {
		if strings.HasPrefix(name, "MANIFEST-") {
			manifest = fs.PathJoin("db", name)
		}
	}
	flipEvery(t, fs, manifest, 16)

	l, err = Open("db", Options{FS: fs})
	if err == nil {
		l.Close()
		t.Fatal("opened a log whose MANIFEST is damaged")
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "backup") {
		t.Fatalf("open: %v, want ErrCorrupt saying to restore from a backup", err)
	}
}

func mustList(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

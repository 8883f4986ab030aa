package projections

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestCheckpointPastTheLogRebuilds: when the log comes back shorter than
// a projection's checkpoint (restored from an older backup, or opened
// with the entries after WAL damage dropped), the global sequences the
// projection believes it has folded are handed out again to new entries.
// The projection must start over, not skip them.
func TestCheckpointPastTheLogRebuilds(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	s := openStore(t, dir)
	for round := range 10 {
		appendRound(t, l, round, 3)
	}
	r, err := NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{}))
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(t, r)
	testkit.Eventually(t, "catch-up", caughtUp(r))
	stop()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// The log is replaced by a shorter one; the projection store stays.
	if err := os.RemoveAll(filepath.Join(dir, "log")); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir)
	defer l.Close()
	defer s.Close()
	for round := 100; round < 102; round++ {
		appendRound(t, l, round, 3)
	}
	r, err = NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{}))
	if err != nil {
		t.Fatal(err)
	}
	stop = runInBackground(t, r)
	defer stop()
	testkit.Eventually(t, "catch-up", caughtUp(r))
	expectTallies(t, r, l)
}

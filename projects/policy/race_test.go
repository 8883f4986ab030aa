package policy

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// swapper flips proj/swap between a real directory and a symlink to
// ../outside until stopped, the attack a check-then-use implementation
// loses: the path is checked while it is a directory and used while it is a
// link.
func swapper(t *testing.T, f fixture) (stop func() int64) {
	t.Helper()
	dir, moved := filepath.Join(f.proj, "swap"), filepath.Join(f.proj, "swap.d")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("INSIDE"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.outside, "f"), []byte("SECRET"), 0o644))
	done := make(chan struct{})
	var wg sync.WaitGroup
	var flips atomic.Int64
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// Errors are ignored: a step may only fail if a reader holds
			// nothing that blocks it, and the next round retries.
			os.Rename(dir, moved)
			os.Symlink("../outside", dir)
			os.Remove(dir)
			os.Rename(moved, dir)
			flips.Add(1)
		}
	})
	return func() int64 { close(done); wg.Wait(); return flips.Load() }
}

func TestRootHoldsWhileAPathIsSwappedForALink(t *testing.T) {
	f := newFixture(t)
	r := openRoot(t, f.proj)
	stop := swapper(t, f)
	var inside, refused int
	for i := 0; i < 1500; i++ {
		b, err := r.ReadFile("swap/f", 100)
		switch {
		case string(b) == "SECRET":
			stop()
			t.Fatalf("read %d returned the outside file", i)
		case err == nil:
			inside++
		default:
			refused++
		}
		r.WriteFile("swap/f", []byte("INSIDE"), 0o644)
		if entries, err := r.ReadDir("swap"); err == nil {
			for _, e := range entries {
				if e.Name() == "secret" {
					stop()
					t.Fatalf("list %d returned the outside directory", i)
				}
			}
		}
	}
	flips := stop()
	if b, _ := os.ReadFile(filepath.Join(f.outside, "f")); string(b) != "SECRET" {
		t.Fatalf("a write reached the outside file: %q", b)
	}
	t.Logf("%d reads inside, %d refused, %d swaps", inside, refused, flips)
}

package testkit

import (
	"sync"
	"testing"
)

type holder struct {
	mu    sync.Mutex
	taken int
}

// waitForLock takes h's lock: a frame BlockedIn is asked about.
func (h *holder) waitForLock() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.taken++
}

// TestBlockedIn: a goroutine held on a lock is seen blocked in the
// function that waits, named with its package path or from a path
// element on, and no longer once the lock is free; a function no
// goroutine blocks in is not.
func TestBlockedIn(t *testing.T) {
	const fn = "internal/testkit.(*holder).waitForLock"
	h := &holder{}
	h.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.waitForLock()
	}()
	Eventually(t, "the goroutine blocked on the lock", func() bool { return BlockedIn(fn) })
	for _, name := range []string{"github.com/jido-bus/jido-bus/" + fn, "testkit.(*holder).waitForLock"} {
		if !BlockedIn(name) {
			t.Errorf("not blocked in %q", name)
		}
	}
	for _, other := range []string{"estkit.(*holder).waitForLock", "(*holder).waitForLock", "internal/testkit.(*holder).waitFor", "internal/testkit.TestBlockedIn"} {
		if BlockedIn(other) {
			t.Errorf("blocked in %q: only whole path elements and whole names match, and the test itself runs", other)
		}
	}
	h.mu.Unlock()
	<-done
	if BlockedIn(fn) {
		t.Fatal("still blocked once the goroutine has ended")
	}
}

// TestBlockedStates: the states of a goroutine that waits count, those
// of one that runs do not.
func TestBlockedStates(t *testing.T) {
	for header, want := range map[string]bool{
		"goroutine 7 [sync.Mutex.Lock]:":          true,
		"goroutine 9 [chan receive, 2 minutes]:":  true,
		"goroutine 3 [select]:":                   true,
		"goroutine 1 [running]:":                  false,
		"goroutine 5 [runnable]:":                 false,
		"goroutine 6 [syscall, 3 minutes]:":       false,
		"not a header":                            false,
		"goroutine 8 [sync.Cond.Wait, locked to]": true,
	} {
		if got := blocked(header); got != want {
			t.Errorf("blocked(%q) = %v, want %v", header, got, want)
		}
	}
}

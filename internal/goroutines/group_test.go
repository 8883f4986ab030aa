package goroutines

import (
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWaitWaitsForWhatRuns: Wait returns only once every goroutine the
// group started has ended.
func TestWaitWaitsForWhatRuns(t *testing.T) {
	var g Group
	release := make(chan struct{})
	var ended atomic.Int64
	for range 3 {
		if !g.Go(func() {
			<-release
			ended.Add(1)
		}) {
			t.Fatal("a new group refused a goroutine")
		}
	}
	waited := make(chan struct{})
	go func() {
		g.Wait()
		close(waited)
	}()
	testkit.Eventually(t, "Wait waiting, or returned", func() bool {
		return isClosed(waited) || testkit.BlockedIn("internal/goroutines.(*Group).Wait")
	})
	if isClosed(waited) {
		t.Fatal("Wait returned while the group's goroutines ran")
	}
	close(release)
	<-waited
	if n := ended.Load(); n != 3 {
		t.Fatalf("%d goroutines ended when Wait returned, want 3", n)
	}
}

// TestGoAfterWaitIsRefused: once Wait was called nothing starts, from
// outside or from a goroutine of the group, and f does not run.
func TestGoAfterWaitIsRefused(t *testing.T) {
	var g Group
	inner := make(chan bool, 1)
	release := make(chan struct{})
	g.Go(func() {
		<-release
		inner <- g.Go(func() { t.Error("a goroutine started by the group once Wait was called") })
	})
	waited := make(chan struct{})
	go func() {
		g.Wait()
		close(waited)
	}()
	testkit.Eventually(t, "Wait called", func() bool { return testkit.BlockedIn("internal/goroutines.(*Group).Wait") })
	if g.Go(func() { t.Error("a goroutine started once Wait was called") }) {
		t.Error("Go after Wait reported true")
	}
	close(release)
	<-waited
	if <-inner {
		t.Error("Go from the group's own goroutine after Wait reported true")
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

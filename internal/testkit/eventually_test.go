package testkit

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPollReturnsOnceTheConditionHolds: the condition is called until it
// holds, and not once more.
func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := poll(Timeout, func() error {
		calls++
		if calls < 5 {
			return fmt.Errorf("call %d", calls)
		}
		return nil
	})
	if err != nil || calls != 5 {
		t.Fatalf("poll: %v after %d calls, want nil after 5", err, calls)
	}
}

// TestPollGivesUpWithTheLastError: a condition that never holds ends
// the wait with its last word, after at least one call.
func TestPollGivesUpWithTheLastError(t *testing.T) {
	calls := 0
	err := poll(0, func() error {
		calls++
		return fmt.Errorf("call %d", calls)
	})
	if err == nil || err.Error() != fmt.Sprintf("call %d", calls) || calls < 1 {
		t.Fatalf("poll: %v after %d calls, want the last call's error", err, calls)
	}
}

// fatalTB records a Fatalf and ends its goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// failure runs wait against a fatalTB on a goroutine of its own and
// returns what it failed with ("" when it did not).
func failure(wait func(testing.TB)) string {
	f := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msg
}

// TestEventuallyNames what it waited for and why it never came: the
// message of a timeout says what a person needs to start looking.
func TestEventuallyNames(t *testing.T) {
	if msg := failure(func(tb testing.TB) { Eventually(tb, "the thing", func() bool { return true }) }); msg != "" {
		t.Fatalf("a condition that holds failed the test: %s", msg)
	}
	if msg := failure(func(tb testing.TB) { EventuallyNil(tb, "the thing", func() error { return nil }) }); msg != "" {
		t.Fatalf("a condition that holds failed the test: %s", msg)
	}
	// The timeout itself is Timeout, too long for a unit test: what is
	// checked here is the message a failed poll becomes.
	for _, c := range []struct {
		err  error
		want string
	}{
		{errNotYet, "waiting for the thing"},
		{errors.New("stream holds a, b"), "waiting for the thing: stream holds a, b"},
	} {
		msg := failure(func(tb testing.TB) { fail(tb, "the thing", c.err) })
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, Timeout.String()) {
			t.Errorf("failed with %q, want it to say %q and the timeout", msg, c.want)
		}
		if c.err == errNotYet && strings.Contains(msg, "not yet") {
			t.Errorf("failed with %q: a false condition has no reason to tell", msg)
		}
	}
}

// TestPollBacksOff: the waits between polls start at minPoll and grow
// to maxPoll, never beyond: quick to see a condition that holds soon,
// no busy loop while one takes seconds.
func TestPollBacksOff(t *testing.T) {
	var waits []time.Duration
	for d := minPoll; len(waits) < 10; d = nextWait(d) {
		waits = append(waits, d)
	}
	if waits[0] != minPoll || waits[1] != 2*minPoll || waits[len(waits)-1] != maxPoll || slices.Max(waits) != maxPoll {
		t.Fatalf("waits %v, want doubling from %s to %s", waits, minPoll, maxPoll)
	}
}

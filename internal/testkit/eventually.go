package testkit

import (
	"errors"
	"testing"
	"time"
)

// Timeout bounds every wait of Eventually. It is generous because the
// tests run with -race on busy machines (the end-to-end tests spawn the
// binary and the NATS CLI meanwhile) and a wait that times out fails the
// test; a condition is seen within maxPoll of holding, so a passing test
// never waits this long.
const Timeout = time.Minute

// The first poll comes after minPoll, each later one after twice the
// previous wait, up to maxPoll: a condition that holds quickly is seen
// quickly, and one that takes seconds costs little CPU while it does.
const (
	minPoll = time.Millisecond
	maxPoll = 50 * time.Millisecond
)

// Eventually polls cond until it returns true and fails the test (with
// what it was waiting for) if it has not within Timeout. It must be
// called from the test's goroutine, as t.Fatal must.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyNil(t, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// EventuallyNil polls cond until it returns nil and fails the test if it
// has not within Timeout; the failure names what it was waiting for and
// says the last error, which is why not (what a stream held, a status).
func EventuallyNil(t testing.TB, what string, cond func() error) {
	t.Helper()
	if err := poll(Timeout, cond); err != nil {
		fail(t, what, err)
	}
}

// fail fails t for a wait for what that ended with err.
func fail(t testing.TB, what string, err error) {
	t.Helper()
	if err == errNotYet {
		t.Fatalf("timed out after %s waiting for %s", Timeout, what)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", Timeout, what, err)
}

// errNotYet is what Eventually's condition says while it is false.
var errNotYet = errors.New("not yet")

// Poll is Eventually's wait for a caller without a test to fail — a test
// cluster's set-up, a benchmark's own deadline: it calls cond, backing off
// as Eventually does, until it returns nil or timeout has passed, and
// returns cond's last error.
func Poll(timeout time.Duration, cond func() error) error { return poll(timeout, cond) }

// poll calls cond until it returns nil or timeout has passed since the
// first call, and returns cond's last error.
func poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	wait := minPoll
	for {
		err := cond()
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = nextWait(wait)
	}
}

// nextWait is the wait between polls after one of d.
func nextWait(d time.Duration) time.Duration { return min(2*d, maxPoll) }

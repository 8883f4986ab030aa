package eventlog

import (
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
)

// A write that Pebble could not make durable — a failed WAL write or
// fsync, typically a full or failing disk — poisons the Log: a failed
// fsync cannot be retried safely (the kernel may have dropped the dirty
// pages it reported, so a second fsync can "succeed" without the data),
// and the batches after it in the WAL must not count as durable either.
// From then on every write fails with a *FailedError (wrapping ErrFailed)
// until the Log is closed and opened again, which replays the WAL: only
// what was synced comes back, and nothing unsynced was acknowledged.
// Reads keep working. The owner (the node) learns of it through Failed
// and FailedNotify.

// FailedError is the error of every write after the Log failed. It wraps
// ErrFailed and the cause; to callers over NATS it is "unavailable"
// (bus.ErrorType), with a message that says what to do.
type FailedError struct {
	Dir   string // the data directory of the Log
	Cause error  // the first write error
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%v: the event log %s could not write to disk (%v); it accepts no more writes: "+
		"free disk space (or replace the failing disk) and restart the node, which then comes back with every acknowledged entry",
		ErrFailed, e.Dir, e.Cause)
}

func (e *FailedError) Unwrap() []error { return []error{ErrFailed, e.Cause} }

// As gives a *bus.Error of type unavailable to errors.As, so that a reply
// carries the right machine word whatever wraps this error on its way.
func (e *FailedError) As(target any) bool {
	if p, ok := target.(**bus.Error); ok {
		*p = bus.Errorf(bus.ReasonUnavailable, "%s", e.Error())
		return true
	}
	return false
}

// Is makes errors.Is(err, &bus.Error{Type: bus.ReasonUnavailable}) hold.
func (e *FailedError) Is(target error) bool {
	t, ok := target.(*bus.Error)
	return ok && t.Message == "" && t.Type == bus.ReasonUnavailable
}

// fail poisons the Log with cause, if it is not already, and returns the
// *FailedError that every later write returns. The first failure is
// logged once.
func (l *Log) fail(cause error) *FailedError {
	l.durMu.Lock()
	defer l.durMu.Unlock()
	if l.failed == nil {
		var fe *FailedError
		if errors.As(cause, &fe) {
			cause = fe.Cause
		}
		l.failed = &FailedError{Dir: l.dir, Cause: cause}
		close(l.failedCh)
		l.logger().Error("event log failed: no more writes until restart", "dir", l.dir, "err", cause)
	}
	return l.failed
}

// failure returns the *FailedError once the Log failed, else nil.
func (l *Log) failure() error {
	l.durMu.Lock()
	defer l.durMu.Unlock()
	if l.failed != nil {
		return l.failed
	}
	return nil
}

// Failed returns nil while the Log can write, and the *FailedError
// (wrapping ErrFailed) once a write could not be made durable. A failed
// Log stays failed until it is closed and opened again.
func (l *Log) Failed() error { return l.failure() }

// FailedNotify returns a channel that is closed when the Log fails.
func (l *Log) FailedNotify() <-chan struct{} { return l.failedCh }

// fatalPanic is what Pebble's Fatalf panics with (see pebbleLogger): a
// write that ran into it is recovered by write and poisons the Log.
type fatalPanic struct{ err error }

// write runs a Pebble write. It refuses once the Log failed; an error, or
// a fatal error Pebble reports through its logger, poisons the Log.
// A caller that must wait for the sync does so itself and calls fail on
// its error.
func (l *Log) write(op func() error) (err error) {
	if err := l.failure(); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = l.fail(fp.err)
		}
	}()
	if err := op(); err != nil {
		return l.fail(err)
	}
	return nil
}

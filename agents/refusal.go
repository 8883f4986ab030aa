package agents

import "errors"

// Refusing input. An action fails (an Error directive, committed with
// the signal, which stays in the log) when it cannot act on input it was
// right to receive. It refuses when the input itself is unacceptable and
// should not be kept: an event that fails its schema, params that fail
// the action's. A refusal is an error wrapped by Refuse, returned by an
// action's Run or a skill's HandleSignal hook; Cmd turns it, like any
// error, into the state as it was plus one Error directive, which it
// marks Refused. Params that fail the action's schema, or that Typed
// cannot decode (invalid_params), are refused the same way.
//
// The runtime does not commit a signal whose decision holds a refused
// Error directive: it answers the sender with the error, files a dead
// letter, and the signal's id stays free, so a corrected resend with the
// same id is accepted. Since a refused signal never reaches the log,
// replay never meets one.

// Refuse marks err as a refusal of the input rather than a failure to act
// on it. err keeps its type (a *bus.Error's machine word) for the reply.
func Refuse(err error) error {
	if err == nil {
		return nil
	}
	return &refusal{err: err}
}

// IsRefusal reports whether err, or an error it wraps, came from Refuse.
func IsRefusal(err error) bool {
	var r *refusal
	return errors.As(err, &r)
}

type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// Refusal returns the first refused Error directive of a decision: the
// error to answer its signal's sender with, when the decision must not be
// committed.
func Refusal(directives []Directive) (Error, bool) {
	for _, d := range directives {
		if e, ok := d.(Error); ok && e.Refused {
			return e, true
		}
	}
	return Error{}, false
}

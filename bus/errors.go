package bus

import (
	"errors"
	"fmt"
	"strings"
)

// Reasons are the machine words that name what was wrong with an input. They
// are the "type" of an error reply, the last token of a dead-letter subject
// (jido.dlq.<reason>) and the reason recorded in the dead-letter stream, so
// they are part of the public contract: new ones may be added, existing ones
// are never renamed.
const (
	ReasonMissingAttribute   = "missing_attribute"   // a required CloudEvents attribute is absent
	ReasonInvalidAttribute   = "invalid_attribute"   // an attribute has a value of the wrong form
	ReasonInvalidSpecVersion = "invalid_specversion" // specversion is not 1.0
	ReasonInvalidType        = "invalid_type"        // the type breaks the segment grammar
	ReasonTypeMismatch       = "type_mismatch"       // ce-type disagrees with the subject
	ReasonMalformed          = "malformed"           // a body or header that cannot be parsed
	ReasonTooLarge           = "too_large"           // data over the size limit
	ReasonInvalidAgentID     = "invalid_agent_id"    // an agent id breaks the id grammar
	ReasonInvalidPattern     = "invalid_pattern"     // a pattern breaks the pattern grammar
	ReasonInvalidStream      = "invalid_stream"      // an event-log stream name breaks the stream grammar
	ReasonInvalidSubject     = "invalid_subject"     // a subject outside the scheme
	ReasonInvalidRequest     = "invalid_request"     // a control-plane request that cannot be served as sent
	ReasonNotFound           = "not_found"           // the addressed agent, stream or object does not exist
	ReasonQueueOverflow      = "queue_overflow"      // the receiver is full; retry later
	ReasonUnavailable        = "unavailable"         // the receiver is shutting down; retry elsewhere or later
	ReasonInternal           = "internal"            // a fault on our side; the message says which
	ReasonForbidden          = "forbidden"           // the caller's role, or the operator's policy, does not allow it
)

// Error is an error with a machine-readable type (one of the Reason
// constants, or another lower_snake_case word) and a message for a person.
// It is what a reply carries as {"ok":false,"error":{"type":…,"message":…}}.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Errorf returns an *Error of the given type with a formatted message.
func Errorf(typ, format string, args ...any) *Error {
	return &Error{Type: typ, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Is makes errors.Is(err, &Error{Type: X}) true for any *Error of type X, so
// callers can test for a reason without comparing messages.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Type == e.Type
}

// ErrorType returns the type word of the first *Error in err's chain, or
// ReasonInternal when there is none.
func ErrorType(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Type
	}
	return ReasonInternal
}

// AsError returns err as an *Error: the first one in its chain when there is
// one (with the outer context kept in the message), otherwise an internal
// error carrying err's text.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return &Error{Type: ReasonInternal, Message: err.Error()}
	}
	if msg := err.Error(); msg != e.Error() {
		// Keep the outer context ("subject X: …") but not the inner type
		// word, which the reply carries in its own member.
		return &Error{Type: e.Type, Message: strings.Replace(msg, e.Error(), e.Message, 1)}
	}
	return e
}

package tools

import (
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// Error types of a failed Result, beside the Sandbox's (policy's
// outside_root, denied, approval_required) and the bus reasons a tool may
// return (not_found, too_large, invalid_request). Part of the public
// contract: new ones may be added, none renamed.
const (
	ReasonUnknownTool      = "unknown_tool"     // no tool of that name in the catalog
	ReasonInvalidArgs      = "invalid_args"     // the args fail the tool's input schema
	ReasonTimeout          = "timeout"          // the tool ran past its timeout and was cancelled
	ReasonBusy             = "busy"             // every slot was taken until the caller's context ended
	ReasonCancelled        = "cancelled"        // the caller's context ended while the tool ran
	ReasonToolFailed       = "tool_failed"      // the tool returned an error without a type
	ReasonNoMatch          = "no_match"         // edit_file: old_string is not in the file
	ReasonMultipleMatches  = "multiple_matches" // edit_file: old_string is there more than once
	ReasonNotText          = "not_text"         // read_file, edit_file: the file is not UTF-8 text
	ReasonOutsideRoot      = policy.ReasonOutsideRoot
	ReasonDenied           = policy.ReasonDenied
	ReasonApprovalRequired = policy.ReasonApprovalRequired
	ReasonLimitExceeded    = policy.ReasonLimitExceeded // run_command reached a resource limit of its policy
	// ReasonUnavailable: the call's start or outcome could not be
	// recorded (a full disk); see Observer for whether the tool ran.
	ReasonUnavailable = bus.ReasonUnavailable
)

// Error is a failed call: a machine word (Type), a sentence saying what to
// do (Message) and optional structured Details (the schema error, the
// failed workflow step). It is a Result's error and the error Run returns.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Is makes errors.Is(err, &Error{Type: X}) and errors.Is(err,
// &bus.Error{Type: X}) true for an *Error of type X.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case *Error:
		return t.Message == "" && t.Type == e.Type
	case *bus.Error:
		return t.Message == "" && t.Type == e.Type
	}
	return false
}

// Errorf returns an *Error of type typ.
func Errorf(typ, format string, args ...any) *Error {
	return &Error{Type: typ, Message: fmt.Sprintf(format, args...)}
}

// toError turns whatever a tool returned into an *Error: its own *Error
// or *bus.Error keeps its type (the message is the whole chain's, so
// context added with %w is kept), anything else is tool_failed.
func toError(tool string, err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		if e.Error() == err.Error() {
			return e
		}
		return &Error{Type: e.Type, Message: err.Error(), Details: e.Details}
	}
	if e, ok := errors.AsType[*bus.Error](err); ok {
		msg := e.Message
		if err.Error() != e.Error() {
			msg = err.Error()
		}
		return &Error{Type: e.Type, Message: msg}
	}
	return &Error{Type: ReasonToolFailed, Message: fmt.Sprintf("%s: %v", tool, err)}
}

package policy

import (
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
)

// Refusal types. They are part of the public contract (a reply's
// error.type), like the bus reasons.
const (
	ReasonOutsideRoot      = "outside_root"      // the path resolves outside the project root
	ReasonDenied           = "denied"            // a rule of the policy refuses the tool or the path
	ReasonApprovalRequired = "approval_required" // the tool's mode is ask: a person must approve the call
	ReasonLimitExceeded    = "limit_exceeded"    // run_command reached one of its resource limits and was ended
)

func outsideRoot(path, format string, args ...any) error {
	return &bus.Error{Type: ReasonOutsideRoot, Message: fmt.Sprintf("path %q ", path) + fmt.Sprintf(format, args...) +
		"; tools may only use paths inside the project root"}
}

func denied(format string, args ...any) error {
	return bus.Errorf(ReasonDenied, format, args...)
}

package tools

import "github.com/jido-bus/jido-bus/conversation"

// Changes reports whether a tool with this Safety may change something:
// it writes files or runs programs, or declares nothing at all (a zero
// Safety is taken to do everything). It is what a conversation's
// permission mode counts as an edit.
func (s Safety) Changes() bool { return s.Writes || s.Runs || !s.Reads }

// what names what a changing tool declares, for people.
func (s Safety) what() string {
	switch {
	case s.Writes && s.Runs:
		return "writes files and runs programs"
	case s.Writes:
		return "writes files"
	case s.Runs:
		return "runs programs"
	default:
		return "declares nothing of what it does, so it counts as changing things"
	}
}

// CheckMode is checkMode for a caller that asks before it runs a call
// (the assistant, which records a refusal without a tool.started).
func CheckMode(tc ToolCall, s Safety) *Error { return checkMode(tc, s) }

// checkMode holds a call to its conversation's permission mode
// (ToolCall.Mode), before the policy is asked: in plan mode a tool that
// changes things is refused plan_mode, approved or not; in ask mode it
// is refused approval_required until a person approved the call. A tool
// that only reads passes in every mode, and the policy's own deny and
// ask still hold after: a mode is never looser than the policy.
func checkMode(tc ToolCall, s Safety) *Error {
	if !s.Changes() {
		return nil
	}
	switch tc.Mode {
	case "", conversation.ModeAuto:
		return nil
	case conversation.ModeAsk:
		if tc.Approved {
			return nil
		}
		return Errorf(ReasonApprovalRequired, "tool %s %s, and the conversation is in ask mode: a person approves each such call (conv approve), or sets the mode to auto (conv mode CONV auto)", tc.Name, s.what())
	default: // plan, and a mode this node does not know
		return Errorf(ReasonPlanMode, "tool %s not run: it %s, and the conversation is in plan mode (read-only); read and propose instead, or have a person set the mode to ask or auto (conv mode CONV ask)", tc.Name, s.what())
	}
}

// ReasonPlanMode: the call's conversation is in plan mode and the tool
// writes or runs; it was not run.
const ReasonPlanMode = conversation.ReasonPlanMode

// modeFor is the mode a call a tool makes (a workflow's step) runs
// under: plan stays plan; otherwise the step is held to the policy
// alone, the calling tool having passed the mode with its Safety, which
// counts what its steps do (Tool.Uses).
func modeFor(parent string) string {
	if parent == conversation.ModeAsk || parent == "" || parent == conversation.ModeAuto {
		return ""
	}
	return conversation.ModePlan
}

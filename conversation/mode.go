package conversation

import (
	"slices"

	"github.com/jido-bus/jido-bus/bus"
)

// Permission modes of a conversation (Data.Mode of conversation.started
// and of conversation.mode). A mode is layered on the project's policy
// and is never looser than it: the policy's deny and ask hold in every
// mode. What counts as an edit is a tool's own declaration (its Safety):
// a tool that writes files or runs programs, or declares nothing.
const (
	// ModePlan is read-only: a tool that writes or runs is not run.
	ModePlan = "plan"
	// ModeAsk is ask-before-edit: a tool that writes or runs waits for a
	// person's approval, as a tool of policy mode ask does.
	ModeAsk = "ask"
	// ModeAuto is auto-edit: the policy as it is. It is the mode of a
	// conversation that names none.
	ModeAuto = "auto"
)

// Modes lists the permission modes from the strictest.
func Modes() []string { return []string{ModePlan, ModeAsk, ModeAuto} }

// CheckMode refuses a mode that is none of Modes (invalid_request); ""
// is ModeAuto.
func CheckMode(m string) error {
	if m == "" || slices.Contains(Modes(), m) {
		return nil
	}
	return bus.Errorf(bus.ReasonInvalidRequest, "mode %q: want plan (read-only: no tool that writes or runs), ask (a person approves each tool that writes or runs) or auto (the project's policy as it is)", m)
}

// ModeRank orders the modes from the strictest (plan 0, ask 1, auto 2;
// "" is auto), so that a caller's choice can be held to a ceiling.
func ModeRank(m string) int {
	if m == "" {
		return 2
	}
	return slices.Index(Modes(), m)
}

// EffectiveMode is m with "" read as ModeAuto.
func EffectiveMode(m string) string {
	if m == "" {
		return ModeAuto
	}
	return m
}

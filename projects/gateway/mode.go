package gateway

import (
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// StartMode is the permission mode of a conversation caller c starts
// through a gateway (MCP chat, A2A), having asked for asked ("" when it
// named none): the caller's ceiling (Caller.MaxMode, the operator's
// http.tokens max_mode; auto where none is set) when it asked for none,
// the mode asked for when it is no looser than the ceiling. A looser one
// is refused forbidden, an unknown one invalid_request: nothing is
// started. "" stands for auto, so that a conversation started as before
// is recorded as before.
func StartMode(c Caller, asked string) (string, error) {
	ceiling := conversation.EffectiveMode(c.MaxMode)
	if asked == "" {
		asked = ceiling
	}
	if err := conversation.CheckMode(asked); err != nil {
		return "", err
	}
	if conversation.ModeRank(asked) > conversation.ModeRank(ceiling) {
		return "", bus.Errorf(bus.ReasonForbidden, "mode %s is looser than the caller %q may start a conversation in (%s, the operator's max_mode for its token in http.tokens): ask for %s or a stricter mode", asked, c.Name, ceiling, ceiling)
	}
	if asked == conversation.ModeAuto {
		return "", nil
	}
	return asked, nil
}

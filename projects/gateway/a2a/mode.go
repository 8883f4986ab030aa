package a2a

import (
	"context"
	"fmt"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// ModeMetadata is the key of a message's metadata naming the permission
// mode of the context (conversation) the message starts: plan, ask or
// auto. It is read only from the message that starts a context; the
// caller's token bounds it (gateway.StartMode).
const ModeMetadata = "jido.mode"

// startMode is the mode of the conversation a message with metadata md
// starts for the request's caller.
func startMode(ctx context.Context, md map[string]any) (string, error) {
	var asked string
	if v, ok := md[ModeMetadata]; ok {
		s, isString := v.(string)
		if !isString {
			return "", sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("metadata %q is %T: give one of \"plan\", \"ask\", \"auto\"", ModeMetadata, v))
		}
		asked = s
	}
	mode, err := gateway.StartMode(gateway.CallerOf(ctx), asked)
	if err != nil {
		msg := err.Error()
		if be := bus.AsError(err); be != nil {
			msg = be.Message
		}
		return "", sdk.NewError(sdk.ErrInvalidParams, fmt.Sprintf("metadata %q: %s", ModeMetadata, msg))
	}
	return mode, nil
}

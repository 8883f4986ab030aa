package a2a

import (
	"context"
	"strings"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// One URL serves A2A 1.0 and 0.3, whose methods have different names
// (SendMessage, message/send) and whose messages different shapes. An
// error a client reads names what it is to do next, so it names it in the
// client's own protocol: a 1.0 client told to call tasks/resubscribe
// would find no such method. The records in the project's stream keep
// the 0.3 names whatever the client spoke (Method* in handler.go).

type legacyKey struct{}

// withLegacy marks ctx as serving a request of an A2A 0.3 client.
func withLegacy(ctx context.Context) context.Context {
	return context.WithValue(ctx, legacyKey{}, true)
}

// legacy reports whether ctx serves an A2A 0.3 client.
func legacy(ctx context.Context) bool {
	v, _ := ctx.Value(legacyKey{}).(bool)
	return v
}

// v1Names maps each 0.3 method name to its 1.0 name.
var v1Names = map[string]string{
	MethodSend:                            "SendMessage",
	MethodStream:                          "SendStreamingMessage",
	MethodGet:                             "GetTask",
	MethodCancel:                          "CancelTask",
	MethodResubscribe:                     "SubscribeToTask",
	MethodList:                            "ListTasks",
	methodExtendedCard:                    "GetExtendedAgentCard",
	"tasks/pushNotificationConfig/get":    "GetTaskPushNotificationConfig",
	"tasks/pushNotificationConfig/list":   "ListTaskPushNotificationConfigs",
	"tasks/pushNotificationConfig/set":    "CreateTaskPushNotificationConfig",
	"tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
}

// methodExtendedCard is the 0.3 name of GetExtendedAgentCard.
const methodExtendedCard = "agent/getAuthenticatedExtendedCard"

// name is method (a 0.3 name) as the client of ctx calls it.
func name(ctx context.Context, method string) string {
	if legacy(ctx) {
		return method
	}
	if n, ok := v1Names[method]; ok {
		return n
	}
	return method
}

// textMessage is the shape of a user message with one text part in the
// client's protocol, for errors that show how to send one.
func textMessage(ctx context.Context) string {
	if legacy(ctx) {
		return `{"message":{"kind":"message","role":"user","messageId":"…","parts":[{"kind":"text","text":"…"}]}}`
	}
	return `{"message":{"role":"ROLE_USER","messageId":"…","parts":[{"text":"…"}]}}`
}

// textPart is the shape of a text part in the client's protocol.
func textPart(ctx context.Context) string {
	if legacy(ctx) {
		return `{"kind":"text","text":"…"}`
	}
	return `{"text":"…"}`
}

// stateName is task state s as the client of ctx names it: 1.0's
// TASK_STATE_INPUT_REQUIRED is 0.3's input-required.
func stateName(ctx context.Context, s sdk.TaskState) string {
	if !legacy(ctx) {
		return s.String()
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s.String(), "TASK_STATE_")), "_", "-")
}

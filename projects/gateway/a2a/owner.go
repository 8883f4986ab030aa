package a2a

import (
	"context"
	"fmt"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// A task belongs to the caller that started it, not to the project: every
// token that reaches a project reaches its A2A agent, and the tasks of one
// would otherwise be read (tasks/get), followed (tasks/resubscribe),
// continued (message/send with its id) and cancelled by any other. So a
// task's conversation.started names its owner (data.by, "http:<caller
// name>"), and a task is seen only by that caller and by admins
// (gateway.Caller.Admin); to anyone else it does not exist, as one never
// started does. A conversation started other than through this gateway
// (conv send or conv start over NATS, an A2A task of a node
// before owners were recorded) names no owner: admins alone see it here.
// A conversation driven from outside (its loop off: its answers are its
// sender's, not the project's assistant's) is no task of the project's
// agent at all.

// OwnerOf is the owner a task started by the caller ctx carries records
// in its conversation.started.
func OwnerOf(ctx context.Context) string { return "http:" + gateway.CallerOf(ctx).Name }

// visible fails with task_not_found unless the caller ctx carries may see
// the tasks of the conversation whose events are events (none: never
// started); id is the task or context asked for. A context's tasks are
// its conversation's, so they all have the conversation's owner: a
// message in another's context is refused as one to another's task is.
func visible(ctx context.Context, id string, events []*views.Event) error {
	if len(events) > 0 {
		started := events[0]
		if started.Type == conversation.Started && started.Data.Assistant {
			if gateway.CallerOf(ctx).Admin || (started.Data.By != "" && started.Data.By == OwnerOf(ctx)) {
				return nil
			}
		}
	}
	return notFound(ctx, id)
}

// notFound is the error for a task or context id the caller cannot see,
// whether it was never started or is another's.
func notFound(ctx context.Context, id string) error {
	return sdk.NewError(sdk.ErrTaskNotFound, fmt.Sprintf("project %s has no task or context %q that this caller may see (a task is seen by the token that started its context, and by admins): %s without a taskId starts one", projectOf(ctx), id, name(ctx, MethodSend)))
}

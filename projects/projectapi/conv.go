package projectapi

import (
	"context"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/projects"
)

// maxConvStartsInFlight bounds the conversation starts and stops that run
// at once (each waits for a few commits); past it a request is refused
// with queue_overflow.
const maxConvStartsInFlight = 64

// serveConv answers conv.start, conv.stop and conv.ls: the conversations
// of a project, each a conversation agent <project>/<conversation> that
// is a child of the project's agent.
func serveConv(b *natsbus.Bus, e *projects.Engine) error {
	s := b.Subjects()
	if err := b.HandleAPI(s.API(Area, VerbConvList), natsbus.Typed(func(_ context.Context, r ProjectRequest) (ConvListReply, error) {
		if err := named(r.Project); err != nil {
			return ConvListReply{}, err
		}
		cs, err := e.ConvList(r.Project)
		return ConvListReply{Conversations: cs}, err
	})); err != nil {
		return fmt.Errorf("project API: %w", err)
	}
	concurrent := map[string]natsbus.APIFunc{
		VerbConvStart: natsbus.Typed(func(ctx context.Context, r ConvStartRequest) (ConvInfo, error) {
			if err := named(r.Project); err != nil {
				return ConvInfo{}, err
			}
			return e.ConvStart(ctx, r)
		}),
		VerbConvStop: natsbus.Typed(func(ctx context.Context, r ConvStopRequest) (ConvStopReply, error) {
			if err := named(r.Project); err != nil {
				return ConvStopReply{}, err
			}
			if r.Conversation == "" {
				return ConvStopReply{}, bus.Errorf(bus.ReasonInvalidRequest, `request names no conversation: send {"project":%q,"conversation":"<conversation-id>"} (project conv ls lists them)`, r.Project)
			}
			err := e.ConvStop(ctx, r.Project, r.Conversation, r.Reason)
			return ConvStopReply{Project: r.Project, Conversation: r.Conversation}, err
		}),
	}
	for verb, fn := range concurrent {
		if err := b.HandleAPIConcurrent(s.API(Area, verb), maxConvStartsInFlight, fn); err != nil {
			return fmt.Errorf("project API: %w", err)
		}
	}
	return nil
}

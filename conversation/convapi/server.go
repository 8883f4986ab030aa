package convapi

import (
	"context"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// maxStartsInFlight bounds the conversation starts and stops that run at
// once (each waits for a few commits); past it a request is refused with
// queue_overflow.
const maxStartsInFlight = 64

// Serve answers <prefix>.api.conv.<verb> requests from s on b, on the same
// handler path as every control-plane area (natsbus.HandleAPI): the
// Bus's queue group, its reply shape, dead letters of requests that
// cannot be read (unknown fields included), its request counter and its
// shutdown gate. start and stop wait for commits and run concurrently;
// every other verb is served one at a time, in arrival order (of two
// approvals of one call, the second sees the first and is refused).
//
// It also answers the project area's conversation verbs of the release
// before (project.conv.start, .stop, .ls) with an error of type moved
// naming the conv verb that replaces each; they go in the next release.
func Serve(b *natsbus.Bus, s *Service) error {
	subj := b.Subjects()
	serial := []struct {
		verb string
		fn   natsbus.APIFunc
	}{
		{VerbList, natsbus.Typed(s.List)},
		{VerbShow, natsbus.Typed(s.Show)},
		{VerbFork, natsbus.Typed(s.Fork)},
		{VerbSend, natsbus.Typed(s.Send)},
		{VerbCancel, natsbus.Typed(s.Cancel)},
		{VerbApprove, natsbus.Typed(s.Approve)},
		{VerbMode, natsbus.Typed(s.Mode)},
		{VerbCompact, natsbus.Typed(s.Compact)},
		{VerbRewind, natsbus.Typed(s.Rewind)},
	}
	for _, h := range serial {
		if err := b.HandleAPI(subj.API(Area, h.verb), h.fn); err != nil {
			return fmt.Errorf("conv API: %w", err)
		}
	}
	for verb, fn := range map[string]natsbus.APIFunc{VerbStart: natsbus.Typed(s.Start), VerbStop: natsbus.Typed(s.Stop)} {
		if err := b.HandleAPIConcurrent(subj.API(Area, verb), maxStartsInFlight, fn); err != nil {
			return fmt.Errorf("conv API: %w", err)
		}
	}
	for _, m := range movedVerbs {
		if err := b.HandleAPI(subj.API(movedArea, m.verb), moved(subj, m.verb, m.to)); err != nil {
			return fmt.Errorf("conv API: %w", err)
		}
	}
	return nil
}

// ReasonMoved is the error type of a request to a verb that has moved;
// its message names the subject that replaces it.
const ReasonMoved = "moved"

// movedArea and movedVerbs are the conversation verbs the project area
// served before they joined this API: the verb there and the one here.
const movedArea = "project"

var movedVerbs = []struct{ verb, to string }{
	{"conv.start", VerbStart},
	{"conv.stop", VerbStop},
	{"conv.ls", VerbList},
}

// moved answers every request to the project area's verb with the conv
// verb that replaces it.
func moved(subj bus.Subjects, verb, to string) natsbus.APIFunc {
	was, now := subj.API(movedArea, verb), subj.API(Area, to)
	how := "the same request and reply"
	if to == VerbList {
		how = `{"project":"<project-id>"} lists a project's conversations with their state, from the status read model (agent list --type conversation lists the agents that run)`
	}
	return func(context.Context, []byte) (any, error) {
		return nil, bus.Errorf(ReasonMoved, "%s has moved to %s (%s); jido-bus conv uses it, and this answer goes in the next release", was, now, how)
	}
}

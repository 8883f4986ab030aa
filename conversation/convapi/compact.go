package convapi

import (
	"context"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// Compact appends conversation.compact to a conversation its project's
// assistant drives, between turns: the loop asks the model for a summary
// of the older messages at once (conversation.compacted). A turn that
// runs, or a compaction in flight, is refused conflict with nothing
// appended — compacting under a running turn would summarise what the
// turn is still answering; a conversation driven from outside has no
// loop to compact it and is refused invalid_request.
//
// API requests are served one at a time; a turn that starts between the
// check and the append (a message sent meanwhile) gets the compaction
// before its next LLM call.
func (s *Service) Compact(ctx context.Context, r CompactRequest) (Reply, error) {
	if err := s.running(r.Conv); err != nil {
		return Reply{}, err
	}
	info, err := s.rt.State(r.Conv)
	if err != nil {
		return Reply{}, bus.Errorf(bus.ReasonNotFound, "conversation %s is not running: jido-bus conv ls lists the conversations", r.Conv)
	}
	st, err := conversation.ReadState(info.State)
	if err != nil {
		return Reply{}, err
	}
	switch {
	case !st.Loop.On:
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, "conversation %s is driven from outside, not by its project's assistant: there is no loop to compact it", r.Conv)
	case st.Loop.Turn != "" || st.OpenWork():
		return Reply{}, bus.Errorf("conflict", "conversation %s is in a turn (answering %s): compact it when the turn has ended (jido-bus conv follow %s shows it), or cancel the turn (jido-bus conv cancel %s)", r.Conv, st.Loop.Turn, r.Conv, r.Conv)
	case st.Loop.Compact.Request != "":
		return Reply{}, bus.Errorf("conflict", "conversation %s is being compacted already (%s): its timeline shows the outcome (jido-bus conv show %s)", r.Conv, st.Loop.Compact.Request, r.Conv)
	}
	data := map[string]string{}
	if r.Reason != "" {
		data["reason"] = r.Reason
	}
	if r.By != "" {
		data["by"] = r.By
	}
	id := bus.NewID()
	return s.call(ctx, r.Conv, conversation.CompactAsked, id, id, data)
}

package convapi

import (
	"context"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Resume closes the work every running conversation left unfinished (tool
// calls requested and never answered, an LLM call in flight): each
// becomes a failure with reason "interrupted" (why says what interrupted
// it), handed to the conversation's agent like any event, so nothing
// requested is silently forgotten. The events' ids derive from what they
// close, so doing this twice appends nothing new. A node resumes its
// conversations once they are recovered, before it takes input.
//
// Most conversations have nothing open, and the agent's own small state
// says so (conversation.ReadState): for a passive agent that is one
// snapshot read, so only the conversations with open work pay for reading
// their stream, which Interruptions needs for the order of that work.
func (s *Service) Resume(ctx context.Context, why string) {
	for _, listed := range s.rt.ListSome(runtime.ListOptions{Type: conversation.AgentType}) {
		info, err := s.rt.State(listed.ID)
		if err == nil {
			var st conversation.AgentState
			if st, err = conversation.ReadState(info.State); err == nil && !st.OpenWork() {
				continue
			}
		}
		if err != nil {
			// Reading the stream decides then, as it always can.
			s.logger.Warn("conversation state unreadable; reading its stream", "conversation", listed.ID, "err", err)
		}
		if err := s.resume(ctx, listed.ID, why); err != nil {
			s.logger.Error("resume conversation", "conversation", listed.ID, "err", err)
		}
	}
}

func (s *Service) resume(ctx context.Context, key, why string) error {
	st := views.NewStatus()
	for e, err := range s.log.ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			return err
		}
		if ev := views.Decode(e); ev != nil {
			st.Fold(ev)
		}
	}
	events, err := views.Interruptions(key, st, s.now().UTC(), why)
	if err != nil {
		return err
	}
	// The loop may have decided an LLM call whose conversation.llm.requested
	// never committed; it is interrupted all the same, so the loop asks
	// again rather than wait for it forever.
	if info, err := s.rt.State(key); err == nil {
		if as, err := conversation.ReadState(info.State); err == nil && as.Loop.Request != "" && (st.LLMRequest == nil || st.LLMRequest.EventID != as.Loop.Request) && !s.callRuns(key, as.Loop.Request) {
			ev, err := s.llmInterrupted(key, as.Loop.Request, why)
			if err != nil {
				return err
			}
			events = append(events, ev)
		}
	}
	for _, ev := range events {
		if _, err := s.rt.Call(ctx, key, ev); err != nil {
			return err
		}
	}
	if len(events) > 0 {
		s.logger.Info("conversation resumed", "conversation", key, "interrupted", len(events))
	}
	return nil
}

// llmInterrupted is the conversation.llm.failed that closes LLM call req
// of conversation key after a restart, with the id Interruptions gives it.
func (s *Service) llmInterrupted(key, req, why string) (bus.Signal, error) {
	return conversation.NewEvent(key, conversation.LLMFailed, "interrupted."+req, req, s.now().UTC(), conversation.Data{
		Error: bus.Errorf(conversation.ReasonInterrupted, "LLM call %s did not finish: %s", req, why),
	})
}

// callRuns reports whether LLM call req of conversation key runs in this
// process: a retry the loop decided after the restart (the recovered call
// closed interrupted by its executor), whose request is recorded once its
// project's settings are read — not work the restart left unfinished.
func (s *Service) callRuns(key, req string) bool {
	return s.inFlight != nil && s.inFlight(key, req)
}

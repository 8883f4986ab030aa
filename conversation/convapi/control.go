package convapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Cancel appends conversation.cancel to a running conversation: the loop
// stops its turn (the provider's stream and the running tools are
// cancelled). A conversation that does not run is refused, with nothing
// appended.
func (s *Service) Cancel(ctx context.Context, req CancelRequest) (Reply, error) {
	if err := s.running(req.Conv); err != nil {
		return Reply{}, err
	}
	data := map[string]string{}
	if req.Reason != "" {
		data["reason"] = req.Reason
	}
	id := bus.NewID()
	return s.call(ctx, req.Conv, conversation.Cancel, id, id, data)
}

// Approve answers a tool call awaiting approval with
// conversation.tool.approval (id approval.<call-id>.<decision>,
// causationid the call id). A call that is not awaiting approval — never
// asked, answered already, closed — is refused not_found, with nothing
// appended.
//
// API requests are served one at a time, so of two answers to one call
// the second sees the first and is refused.
func (s *Service) Approve(ctx context.Context, r ApproveRequest) (Reply, error) {
	if r.CallID == "" {
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, `request has no call_id: send {"conv":"<project>/<conversation>","call_id":"…","decision":"approve|deny"}; jido-bus conv show CONV lists the calls awaiting approval`)
	}
	switch r.Decision {
	case conversation.DecisionApprove, conversation.DecisionDeny:
	default:
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, "decision %q: want approve or deny", r.Decision)
	}
	switch {
	case r.Remember == "":
	case r.Remember != conversation.RememberConversation:
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, "remember %q: the only scope is \"conversation\" (approve this tool for the rest of the conversation), or leave it out", r.Remember)
	case r.Decision != conversation.DecisionApprove:
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, "remember goes with approve only: a deny is for this call")
	}
	if err := s.running(r.Conv); err != nil {
		return Reply{}, err
	}
	if err := s.awaitingApproval(r.Conv, r.CallID); err != nil {
		return Reply{}, err
	}
	data := conversation.Data{CallID: r.CallID, Decision: r.Decision, Remember: r.Remember, Reason: r.Reason, By: r.By}
	return s.call(ctx, r.Conv, conversation.ToolApproval, "approval."+r.CallID+"."+r.Decision, r.CallID, data)
}

// Mode appends conversation.mode to a running conversation: its
// permission mode for the tool calls the loop starts from then on. A
// mode that is none of conversation.Modes, or a conversation that does
// not run, is refused with nothing appended. Every mode is within the
// project's policy, so setting one never lets a tool past it.
func (s *Service) Mode(ctx context.Context, r ModeRequest) (Reply, error) {
	if r.Mode == "" {
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, `request has no mode: send {"conv":"<project>/<conversation>","mode":"plan|ask|auto"}`)
	}
	if err := conversation.CheckMode(r.Mode); err != nil {
		return Reply{}, err
	}
	if err := s.running(r.Conv); err != nil {
		return Reply{}, err
	}
	id := bus.NewID()
	return s.call(ctx, r.Conv, conversation.ModeChanged, id, id, conversation.Data{Mode: r.Mode, Reason: r.Reason, By: r.By})
}

// running checks key and that a conversation agent runs under it.
func (s *Service) running(key string) error {
	if key == "" {
		return bus.Errorf(bus.ReasonInvalidRequest, `request has no conv: send {"conv":"<project>/<conversation>",…}`)
	}
	if err := conversation.CheckKey(key); err != nil {
		return bus.Errorf(bus.ReasonInvalidRequest, "conv %q: %v", key, err)
	}
	info, err := s.rt.State(key)
	if err != nil || info.Type != conversation.AgentType {
		return bus.Errorf(bus.ReasonNotFound, "conversation %s is not running: start it with jido-bus conv start or conv send %s TEXT; jido-bus conv ls lists the conversations", key, key)
	}
	return nil
}

// awaitingApproval fails with not_found unless call callID of
// conversation key has a conversation.tool.approval.requested with
// neither an answer nor an outcome after it. It reads the conversation's
// stream, as resuming does: the status read model (EVENTS' branch: a
// call's state awaiting_approval) may lag the log.
func (s *Service) awaitingApproval(key, callID string) error {
	var asked bool
	var closedBy string
	for e, err := range s.log.ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: "conversation.tool.**"}) {
		if err != nil {
			return fmt.Errorf("read conversation %s: %w", key, err)
		}
		var d struct {
			CallID   string `json:"call_id"`
			Decision string `json:"decision"`
		}
		if json.Unmarshal(e.Event.Data(), &d) != nil || d.CallID != callID {
			continue
		}
		switch t := e.Event.Type(); t {
		case conversation.ToolApprovalRequested:
			asked, closedBy = true, ""
		case conversation.ToolApproval:
			closedBy = "it was answered already (" + d.Decision + ")"
		case conversation.ToolCompleted, conversation.ToolFailed, conversation.ToolCancelled, conversation.ToolTimeout:
			closedBy = "it has ended (" + t + ")"
		}
	}
	switch {
	case !asked:
		return bus.Errorf(bus.ReasonNotFound, "call %s of conversation %s is not awaiting approval: no approval was asked for it; jido-bus conv show %s lists the calls awaiting approval", callID, key, key)
	case closedBy != "":
		return bus.Errorf(bus.ReasonNotFound, "call %s of conversation %s is not awaiting approval: %s", callID, key, closedBy)
	}
	return nil
}

// call hands conversation key's agent an event of type typ, id and
// causationid causation, stamped now, and answers with its id and the
// stream's version once committed.
func (s *Service) call(ctx context.Context, key, typ, id, causation string, data any) (Reply, error) {
	sig, err := conversation.NewEvent(key, typ, id, causation, s.now().UTC(), data)
	if err != nil {
		return Reply{}, err
	}
	reply, err := s.rt.Call(ctx, key, sig)
	if err != nil {
		return Reply{}, err
	}
	return Reply{ID: sig.ID(), Conv: key, Version: reply.Version}, nil
}

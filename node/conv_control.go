package node

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Decisions and remember scopes of conversation.tool.approval.
const (
	decisionApprove      = "approve"
	decisionDeny         = "deny"
	rememberConversation = "conversation"
)

// convControlReply is the reply of jido.api.conv.cancel and
// jido.api.conv.approve: the appended event's id and the stream's version
// after it.
type convControlReply struct {
	ID      string `json:"id"`
	Conv    string `json:"conv"`
	Version uint64 `json:"version"`
}

// convCancelRequest is the body of jido.api.conv.cancel.
type convCancelRequest struct {
	Conv   string `json:"conv"`
	Reason string `json:"reason,omitempty"`
}

// convCancel appends conversation.cancel to a running conversation: the
// loop stops its turn (the provider's stream and the running tools are
// cancelled). A conversation that does not run is refused, with nothing
// appended.
func (n *Node) convCancel(ctx context.Context, req []byte) (any, error) {
	var r convCancelRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	if err := n.runningConversation(r.Conv); err != nil {
		return nil, err
	}
	data := map[string]string{}
	if r.Reason != "" {
		data["reason"] = r.Reason
	}
	sig, err := agents.NewSignal(conversation.Cancel, data)
	if err != nil {
		return nil, err
	}
	sig.SetID(bus.NewID())
	sig.SetExtension(bus.ExtCausationID, sig.ID())
	return n.callConversation(ctx, r.Conv, sig)
}

// convApproveRequest is the body of jido.api.conv.approve. Reason and By
// are recorded in the event: the CLI's deny --reason, and who decided.
type convApproveRequest struct {
	Conv     string `json:"conv"`
	CallID   string `json:"call_id"`
	Decision string `json:"decision"`
	Remember string `json:"remember,omitempty"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
}

// approvalData is the data of conversation.tool.approval.
type approvalData struct {
	CallID   string `json:"call_id"`
	Decision string `json:"decision"`
	Remember string `json:"remember,omitempty"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
}

// convApprove answers a tool call awaiting approval with
// conversation.tool.approval (id approval.<call-id>.<decision>,
// causationid the call id). A call that is not awaiting approval — never
// asked, answered already, closed — is refused not_found, with nothing
// appended.
//
// API requests are served one at a time, so of two answers to one call
// the second sees the first and is refused.
func (n *Node) convApprove(ctx context.Context, req []byte) (any, error) {
	var r convApproveRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	if r.CallID == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, `request has no call_id: send {"conv":"<project>/<conversation>","call_id":"…","decision":"approve|deny"}; jido-bus conv show CONV lists the calls awaiting approval`)
	}
	switch r.Decision {
	case decisionApprove, decisionDeny:
	default:
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "decision %q: want approve or deny", r.Decision)
	}
	switch {
	case r.Remember == "":
	case r.Remember != rememberConversation:
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "remember %q: the only scope is \"conversation\" (approve this tool for the rest of the conversation), or leave it out", r.Remember)
	case r.Decision != decisionApprove:
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "remember goes with approve only: a deny is for this call")
	}
	if err := n.runningConversation(r.Conv); err != nil {
		return nil, err
	}
	if err := n.awaitingApproval(r.Conv, r.CallID); err != nil {
		return nil, err
	}
	sig, err := agents.NewSignal(conversation.ToolApproval, approvalData(r.approval()))
	if err != nil {
		return nil, err
	}
	sig.SetID("approval." + r.CallID + "." + r.Decision)
	sig.SetExtension(bus.ExtCausationID, r.CallID)
	return n.callConversation(ctx, r.Conv, sig)
}

func (r convApproveRequest) approval() approvalData {
	return approvalData{CallID: r.CallID, Decision: r.Decision, Remember: r.Remember, Reason: r.Reason, By: r.By}
}

// runningConversation checks key and that a conversation agent runs
// under it.
func (n *Node) runningConversation(key string) error {
	if key == "" {
		return bus.Errorf(bus.ReasonInvalidRequest, `request has no conv: send {"conv":"<project>/<conversation>",…}`)
	}
	if err := conversation.CheckKey(key); err != nil {
		return bus.Errorf(bus.ReasonInvalidRequest, "conv %q: %v", key, err)
	}
	info, err := n.rt.State(key)
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
func (n *Node) awaitingApproval(key, callID string) error {
	var asked bool
	var closedBy string
	for e, err := range n.evlog.ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: "conversation.tool.**"}) {
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

// callConversation hands sig, a conversation event, to conversation key's
// agent and answers with its id and the stream's version once committed.
func (n *Node) callConversation(ctx context.Context, key string, sig bus.Signal) (convControlReply, error) {
	sig.SetSource(conversation.Source(key))
	sig.SetTime(time.Now().UTC())
	reply, err := n.rt.Call(ctx, key, sig)
	if err != nil {
		return convControlReply{}, err
	}
	return convControlReply{ID: sig.ID(), Conv: key, Version: reply.Version}, nil
}

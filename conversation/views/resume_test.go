package views

import (
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
)

// TestInterruptionsKeepPendingApprovals: a restart closes running work but
// not a question to a person; a fork closes both.
func TestInterruptionsKeepPendingApprovals(t *testing.T) {
	st := NewStatus()
	seq := uint64(0)
	fold := func(typ string, d conversation.Data) {
		seq++
		st.Fold(&Event{Type: typ, ID: typ, Seq: seq, Data: d})
	}
	fold(conversation.ToolRequested, conversation.Data{CallID: "ask", Name: "run_command"})
	fold(conversation.ToolRequested, conversation.Data{CallID: "run", Name: "read_file"})
	fold(conversation.ToolApprovalRequested, conversation.Data{CallID: "ask", Name: "run_command", TimeoutMS: 1000})
	if st.State != StateAwaitingApproval {
		t.Fatalf("state %s, want %s", st.State, StateAwaitingApproval)
	}
	at := time.Unix(0, 0)
	events, err := Interruptions("p/c", st, at, "restart")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].ID() != "interrupted.run" {
		t.Fatalf("restart closes %d events (%v), want only interrupted.run", len(events), events)
	}
	events, err = interruptions("p/c", st, at, "fork", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].ID() != "interrupted.ask" {
		t.Fatalf("a fork closes %d events, want the pending approval too", len(events))
	}
}

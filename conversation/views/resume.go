package views

import (
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// Interruptions returns the events that close the work a conversation left
// unfinished — each pending tool call becomes conversation.tool.failed and
// an LLM call in flight becomes conversation.llm.failed, both with error
// type "interrupted" — in the order the work was requested. The runtime
// appends them after a restart (before the conversation takes new input)
// and when it handles conversation.resume, so that nothing requested is
// silently forgotten.
//
// A call awaiting approval is not work in flight but a question to a
// person: it stays pending (a restart keeps pending approvals, same call
// ids). A call already denied is closed as the loop would close it:
// conversation.tool.failed with error type denied and the loop's id
// "tool.<call id>.failed", so that the loop recording it too is a
// duplicate.
//
// It is pure: ids derive from what each event closes ("interrupted.<call
// id>", "interrupted.<llm request event id>"), so calling it again after a
// crash gives the same events, which the log then drops as duplicates.
// at is the time the events carry; why goes into their message.
func Interruptions(key string, st *Status, at time.Time, why string) ([]bus.Signal, error) {
	return interruptions(key, st, at, why, true)
}

// interruptions is Interruptions; keepApprovals false closes the calls
// awaiting approval too (a fork, where nobody will answer the parent's
// questions).
func interruptions(key string, st *Status, at time.Time, why string, keepApprovals bool) ([]bus.Signal, error) {
	if why == "" {
		why = "the conversation was interrupted"
	}
	var out []bus.Signal
	add := func(typ, id, causation string, data conversation.Data) error {
		s := bus.Signal{}
		s.SetSpecVersion(bus.SpecVersion)
		s.SetType(typ)
		s.SetID(id)
		s.SetSource(conversation.Source(key))
		s.SetTime(at)
		s.SetExtension(bus.ExtCausationID, causation)
		if err := bus.SetJSONData(&s, data); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	}
	type work struct {
		seq  uint64
		emit func() error
	}
	var todo []work
	for _, p := range st.PendingTools {
		switch {
		case p.State == ToolAwaitingApproval && keepApprovals:
			continue
		case p.Name == conversation.DelegateTool && p.State == ToolRunning && keepApprovals:
			// Its child conversation resumes as this one does; the node
			// waits for its answer again (assistant.ResumeDelegate).
			continue
		case p.State == ToolDenied:
			todo = append(todo, work{p.Seq, func() error {
				return add(conversation.ToolFailed, "tool."+p.CallID+".failed", p.CallID, conversation.Data{
					CallID: p.CallID,
					Error:  bus.Errorf(conversation.ReasonDenied, "tool call %s (%s) was denied%s", p.CallID, p.Name, deniedBy(p.Approval)),
				})
			}})
			continue
		}
		todo = append(todo, work{p.Seq, func() error {
			return add(conversation.ToolFailed, "interrupted."+p.CallID, p.CallID, conversation.Data{
				CallID: p.CallID,
				Error:  bus.Errorf(conversation.ReasonInterrupted, "tool call %s (%s) did not finish: %s", p.CallID, p.Name, why),
			})
		}})
	}
	if r := st.LLMRequest; r != nil {
		todo = append(todo, work{r.Seq, func() error {
			return add(conversation.LLMFailed, "interrupted."+r.EventID, r.EventID, conversation.Data{
				Error:   bus.Errorf(conversation.ReasonInterrupted, "LLM call %s did not finish: %s", r.EventID, why),
				Attempt: r.Attempt,
			})
		}})
	}
	// Close work in the order it was requested, as a person reads it.
	for i := 1; i < len(todo); i++ {
		for j := i; j > 0 && todo[j].seq < todo[j-1].seq; j-- {
			todo[j], todo[j-1] = todo[j-1], todo[j]
		}
	}
	for _, w := range todo {
		if err := w.emit(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deniedBy names who denied a call, for the message of its failure.
func deniedBy(a *PendingApproval) string {
	if a == nil || a.By == "" {
		return ""
	}
	return " by " + a.By
}

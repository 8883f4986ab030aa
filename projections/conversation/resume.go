package conversation

import (
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
)

// Interruptions returns the events that close the work a conversation left
// unfinished — each pending tool call becomes conversation.tool.failed and
// an LLM call in flight becomes conversation.llm.failed, both with error
// type "interrupted" — in the order the work was requested. The runtime
// appends them after a restart (before the conversation takes new input)
// and when it handles conversation.resume, so that nothing requested is
// silently forgotten.
//
// It is pure: ids derive from what each event closes ("interrupted.<call
// id>", "interrupted.<llm request event id>"), so calling it again after a
// crash gives the same events, which the log then drops as duplicates.
// at is the time the events carry; why goes into their message.
func Interruptions(key string, st *Status, at time.Time, why string) ([]bus.Signal, error) {
	if why == "" {
		why = "the conversation was interrupted"
	}
	var out []bus.Signal
	add := func(typ, id, causation string, data convevent.Data) error {
		s := bus.Signal{}
		s.SetSpecVersion(bus.SpecVersion)
		s.SetType(typ)
		s.SetID(id)
		s.SetSource(convevent.Source(key))
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
		todo = append(todo, work{p.Seq, func() error {
			return add(convevent.ToolFailed, "interrupted."+p.CallID, p.CallID, convevent.Data{
				CallID: p.CallID,
				Error:  bus.Errorf(convevent.ReasonInterrupted, "tool call %s (%s) did not finish: %s", p.CallID, p.Name, why),
			})
		}})
	}
	if r := st.LLMRequest; r != nil {
		todo = append(todo, work{r.Seq, func() error {
			return add(convevent.LLMFailed, "interrupted."+r.EventID, r.EventID, convevent.Data{
				Error: bus.Errorf(convevent.ReasonInterrupted, "LLM call %s did not finish: %s", r.EventID, why),
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

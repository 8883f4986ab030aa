package views

import (
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Fork returns the events of a new conversation newKey whose history is the
// conversation parentKey up to its stream sequence seq. entries are the
// parent stream's entries in order (at least up to seq; bookkeeping entries
// are skipped).
//
// The first event is a conversation.started for newKey naming its origin
// (data.parent, and the parentid and causationid extensions: the id of the
// parent's last conversation event at or before seq), with the parent's
// title, system prompt, model, model configuration, limits, budget and
// permission mode. The
// parent's other conversation events up to seq follow unchanged — same
// ids, so causation links stay valid inside the fork. Last come the
// Interruptions of the work unfinished at seq, since nothing will ever
// finish it in the fork, calls awaiting approval included.
//
// It is pure; at is the time of the events it makes. The caller appends the
// result to conversation.Stream(newKey), expecting the stream not to exist.
func Fork(parentKey string, entries []eventlog.Entry, seq uint64, newKey string, at time.Time) ([]bus.Signal, error) {
	if err := conversation.CheckKey(newKey); err != nil {
		return nil, err
	}
	if newKey == parentKey {
		return nil, fmt.Errorf("fork of %s: the new conversation must have another id", parentKey)
	}
	var (
		started *Event
		last    *Event
		history []bus.Signal
		st      = NewStatus()
	)
	for _, e := range entries {
		if e.Seq > seq {
			break
		}
		if !bus.MatchPattern(conversation.TypePattern, e.Event.Type()) || conversation.IsTransient(e.Event.Type()) {
			continue
		}
		ev := Decode(e)
		last = ev
		st.Fold(ev)
		if ev.Type == conversation.Started {
			if started == nil {
				started = ev
			}
			continue
		}
		history = append(history, e.Event.Clone())
	}
	if started == nil {
		return nil, fmt.Errorf("fork of %s at seq %d: no conversation.started at or before it", parentKey, seq)
	}
	if end := entries[len(entries)-1].Seq; end < seq {
		return nil, fmt.Errorf("fork of %s at seq %d: the conversation ends at seq %d", parentKey, seq, end)
	}
	project, conv := splitKey(newKey)
	data := conversation.Data{
		ProjectID: project, ConversationID: conv,
		Title: started.Data.Title, System: started.Data.System, Model: started.Data.Model,
		LLM: started.Data.LLM, Limits: started.Data.Limits, Budget: started.Data.Budget, Assistant: started.Data.Assistant,
		// The mode it started in (the copied conversation.mode events
		// follow): a fork is never a way out of a plan.
		Mode: started.Data.Mode,
		// A fork of a delegated conversation keeps its tools and depth:
		// a fork is no way out of a delegation's bounds either.
		Tools: started.Data.Tools, Delegated: started.Data.Delegated,
		// The fork is decided from now on by the loop of today; the
		// parent's events it copies are folded, not acted on.
		Loop:   conversation.LoopVersion,
		Parent: &conversation.ForkOrigin{Conversation: parentKey, Seq: seq, EventID: last.ID},
	}
	data.History = len(history)
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(conversation.Started)
	s.SetID("fork." + parentKey + "." + last.ID)
	s.SetSource(conversation.Source(newKey))
	s.SetTime(at)
	s.SetExtension(bus.ExtCausationID, last.ID)
	s.SetExtension(conversation.ExtParentID, last.ID)
	if err := bus.SetJSONData(&s, data); err != nil {
		return nil, err
	}
	out := append([]bus.Signal{s}, history...)
	// A question pending in the parent is the parent's: the fork closes it.
	closing, err := interruptions(newKey, st, at, fmt.Sprintf("forked from %s at seq %d", parentKey, seq), false)
	if err != nil {
		return nil, err
	}
	return append(out, closing...), nil
}

func splitKey(key string) (project, conv string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return key, ""
}

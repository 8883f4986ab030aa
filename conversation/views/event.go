package views

import (
	"time"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// Event is a conversation entry as the read models see it: the CloudEvent's
// attributes, its position and its decoded data.
type Event struct {
	Type        string
	ID          string
	Seq         uint64
	GlobalSeq   uint64
	Time        time.Time // the event's own time, or the commit time when it has none
	CausationID string
	ParentID    string
	Data        conversation.Data
	// Invalid says why the data did not decode; Data is then zero.
	Invalid string
}

// decoded is shared by the four read models, so each entry's data is
// decoded once however many of them a runner folds. The entries a runner
// folds come from the log and own their memory, which never changes, so
// the members of their data are views of it, not copies.
var decoded = projections.NewMemo(func(e *eventlog.Entry) *Event { return decodeEntry(e, true) })

// decodeEntry decodes e; shared as in conversation.DecodeDataInto.
func decodeEntry(e *eventlog.Entry, shared bool) *Event {
	ev := &Event{
		Type:        e.Event.Type(),
		ID:          e.Event.ID(),
		Seq:         e.Seq,
		GlobalSeq:   e.GlobalSeq,
		Time:        e.Event.Time(),
		CausationID: conversation.CausationID(e.Event),
		ParentID:    conversation.ParentID(e.Event),
	}
	if ev.Time.IsZero() {
		ev.Time = e.Time
	}
	if data := e.Event.Data(); len(data) > 0 {
		if err := conversation.DecodeDataInto(&ev.Data, data, shared); err != nil {
			ev.Data = conversation.Data{}
			ev.Invalid = err.Error()
		}
	}
	return ev
}

// Decode returns the Event of a log entry, for folds outside a runner. Its
// data shares no memory with the entry.
func Decode(e eventlog.Entry) *Event { return decodeEntry(&e, false) }

// The read models are projections.Preparers: a runner decodes each entry
// on the goroutine that reads the log ahead of the fold, and the first
// Prepare to run fills the Memo for the others and for Apply.
func (TimelineProjection) Prepare(e *projections.Entry)    { decoded.Of(e) }
func (LLMContextProjection) Prepare(e *projections.Entry)  { decoded.Of(e) }
func (StatusProjection) Prepare(e *projections.Entry)      { decoded.Of(e) }
func (DiagnosticsProjection) Prepare(e *projections.Entry) { decoded.Of(e) }

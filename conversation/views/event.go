package views

import (
	"sync"
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
// the members of their data are views of it, not copies. A runner hands
// each Event back once the four have folded its entry, and the next entry
// reuses it: allocating a new one per entry was a third of the bytes a
// rebuild allocated. No read model keeps an Event (nor its Data's
// address; what its members point to is never reused).
var decoded = projections.NewRecycledMemo(func(e *eventlog.Entry) *Event {
	ev := eventPool.Get().(*Event)
	decodeInto(ev, e, true)
	return ev
}, func(ev *Event) { eventPool.Put(ev) })

var eventPool = sync.Pool{New: func() any { return new(Event) }}

// decodeInto decodes e into ev, overwriting all of it; shared as in
// conversation.DecodeDataInto.
func decodeInto(ev *Event, e *eventlog.Entry, shared bool) {
	ev.Type, ev.ID = e.Event.Type(), e.Event.ID()
	ev.Seq, ev.GlobalSeq = e.Seq, e.GlobalSeq
	ev.Time = e.Event.Time()
	if ev.Time.IsZero() {
		ev.Time = e.Time
	}
	ev.CausationID = conversation.CausationID(e.Event)
	ev.ParentID = conversation.ParentID(e.Event)
	ev.Invalid = ""
	data := e.Event.Data()
	if len(data) == 0 {
		ev.Data = conversation.Data{}
		return
	}
	if err := conversation.DecodeDataInto(&ev.Data, data, shared); err != nil {
		ev.Data = conversation.Data{}
		ev.Invalid = err.Error()
	}
}

// Decode returns the Event of a log entry, for folds outside a runner. Its
// data shares no memory with the entry.
func Decode(e eventlog.Entry) *Event {
	ev := new(Event)
	decodeInto(ev, &e, false)
	return ev
}

// The read models are projections.Preparers: a runner decodes each entry
// on the goroutine that reads the log ahead of the fold, and the first
// Prepare to run fills the Memo for the others and for Apply.
func (TimelineProjection) Prepare(e *projections.Entry)    { decoded.Of(e) }
func (LLMContextProjection) Prepare(e *projections.Entry)  { decoded.Of(e) }
func (StatusProjection) Prepare(e *projections.Entry)      { decoded.Of(e) }
func (DiagnosticsProjection) Prepare(e *projections.Entry) { decoded.Of(e) }

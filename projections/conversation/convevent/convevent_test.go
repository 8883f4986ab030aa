package convevent

import (
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/jido-bus/jido-bus/bus"
)

// TestExtensions reads the causation and parent ids from a CloudEvents 1.0
// context (read in place) and from a 0.3 one (read through Extensions).
func TestExtensions(t *testing.T) {
	for _, version := range []string{event.CloudEventsVersionV1, event.CloudEventsVersionV03} {
		e := bus.Signal(event.New(version))
		if got := CausationID(e); got != "" {
			t.Errorf("%s: causation id %q without the extension", version, got)
		}
		e.SetExtension(bus.ExtCausationID, "e1")
		e.SetExtension(ExtParentID, "p7")
		if got := CausationID(e); got != "e1" {
			t.Errorf("%s: causation id %q, want e1", version, got)
		}
		if got := ParentID(e); got != "p7" {
			t.Errorf("%s: parent id %q, want p7", version, got)
		}
	}
}

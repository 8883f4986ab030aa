package conversation

import (
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/schemas"
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

// TestTypesHaveSchemas checks that every logged type Types lists is an
// "event" schema of the built-in registry, the approval types included, and
// that every conversation event schema is listed: the conversation agent
// refuses a type without a schema.
func TestTypesHaveSchemas(t *testing.T) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	listed := make(map[string]bool)
	for _, typ := range Types() {
		listed[typ] = true
	}
	for _, typ := range []string{ToolApprovalRequested, ToolApproval} {
		if !listed[typ] {
			t.Errorf("Types() lacks %s", typ)
		}
	}
	for _, e := range reg.Entries() {
		if e.Kind == "event" && strings.HasPrefix(e.Name, "conversation.") && !listed[e.Name] {
			t.Errorf("schema %s is not in Types()", e.Name)
		}
	}
	for typ := range listed {
		found := false
		for _, e := range reg.Entries() {
			found = found || e.Kind == "event" && e.Name == typ
		}
		if !found {
			t.Errorf("%s has no event schema", typ)
		}
	}
}

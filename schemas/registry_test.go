package schemas

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestBuiltinListsEveryLifecycleSignalAndDirective(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	kinds := make(map[string]string)
	for _, e := range r.Entries() {
		kinds[e.Name] = e.Kind
		if e.Title == "" || e.Description == "" {
			t.Errorf("schema %s has no title or description", e.Name)
		}
	}
	want := map[string]string{
		"jido.agent.child.started":  "signal",
		"jido.agent.child.exit":     "signal",
		"jido.agent.orphaned":       "signal",
		"jido.agent.error":          "signal",
		"jido.scheduled":            "signal",
		"jido.cron_tick":            "signal",
		"jido.agent.stop":           "signal",
		"directive.emit":            "directive",
		"directive.error":           "directive",
		"directive.spawn_agent":     "directive",
		"directive.stop_child":      "directive",
		"directive.schedule":        "directive",
		"directive.schedule_cancel": "directive",
		"directive.cron":            "directive",
		"directive.cron_cancel":     "directive",
		"directive.run_instruction": "directive",
		"directive.stop":            "directive",
		"cloudevent":                "defs",
	}
	for name, kind := range want {
		if kinds[name] != kind {
			t.Errorf("schema %s: kind %q, want %q", name, kinds[name], kind)
		}
	}
}

func TestLifecycleSignalSchemas(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, event string
		pointer     string // "" means valid
	}{
		{"jido.agent.child.exit", `{"specversion":"1.0","id":"1","source":"/agent/p","type":"jido.agent.child.exit","data":{"tag":"w","id":"p/w","reason":"normal"}}`, ""},
		{"jido.agent.child.exit", `{"specversion":"1.0","id":"1","source":"/agent/p","type":"jido.agent.child.exit","data":{"tag":"w","id":"p/w"}}`, "/data/reason"},
		{"jido.agent.child.exit", `{"specversion":"1.0","id":"1","source":"/agent/p","type":"jido.agent.orphaned","data":{"tag":"w","id":"p/w","reason":"x"}}`, "/type"},
		{"jido.agent.child.started", `{"specversion":"1.0","id":"1","source":"/agent/p","type":"jido.agent.child.started","data":{"tag":"w","id":"p/w","type":"counter"}}`, ""},
		{"jido.agent.orphaned", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.agent.orphaned","data":{"parent_id":"p","reason":"killed"}}`, ""},
		{"jido.agent.error", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.agent.error","data":{"error":{"type":"no_route","message":"m"},"context":"routing"}}`, ""},
		{"jido.agent.error", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.agent.error","data":{"error":{"type":"No Route","message":"m"},"context":"routing"}}`, "/data/error/type"},
		{"jido.scheduled", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.scheduled","data":{"message":[1,2]}}`, ""},
		{"jido.cron_tick", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.cron_tick","time":"2025-01-01T00:00:00Z","data":{"job_id":"j"}}`, ""},
		{"jido.cron_tick", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.cron_tick","time":"noon","data":{"job_id":"j"}}`, "/time"},
		{"jido.agent.stop", `{"specversion":"1.0","id":"1","source":"/agent/c","type":"jido.agent.stop","data":{"reason":"done"}}`, ""},
		{"jido.agent.stop", `{"specversion":"1.0","source":"/agent/c","type":"jido.agent.stop","data":{}}`, "/id"},
	}
	for _, tt := range tests {
		err := r.Validate(tt.name, decode(t, tt.event))
		if tt.pointer == "" {
			if err != nil {
				t.Errorf("%s: valid event rejected: %v", tt.name, err)
			}
			continue
		}
		ve, ok := errors.AsType[*ValidationError](err)
		if !ok || ve.Pointer() != tt.pointer {
			t.Errorf("%s: error %v, want one at %s", tt.name, err, tt.pointer)
		}
	}
}

func TestAddFSDropsInANewKind(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	conv := fstest.MapFS{
		"example/widget.created.json": {Data: []byte(`{
		  "title": "Widget created",
		  "description": "A widget was made.",
		  "allOf": [{"$ref": "../defs/cloudevent.json"}],
		  "properties": {"data": {"type": "object", "required": ["project_id"]}}
		}`)},
	}
	if err := r.AddFS(conv); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range r.Entries() {
		found = found || e.Name == "widget.created" && e.Kind == "example"
	}
	if !found {
		t.Fatal("widget.created is not listed")
	}
	err = r.Validate("widget.created", decode(t, `{"specversion":"1.0","id":"1","source":"s","type":"widget.created","data":{}}`))
	if ve, ok := errors.AsType[*ValidationError](err); !ok || ve.Pointer() != "/data/project_id" {
		t.Errorf("Validate = %v, want an error at /data/project_id", err)
	}
}

func TestAddFSFailsWholeAndNamesTheFile(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"duplicate of a registered name", fstest.MapFS{"other/jido.agent.error.json": {Data: []byte(`{}`)}}, "other/jido.agent.error.json"},
		{"duplicate within the files", fstest.MapFS{"a/x.json": {Data: []byte(`{}`)}, "b/x.json": {Data: []byte(`{}`)}}, "x.json"},
		{"no kind directory", fstest.MapFS{"x.json": {Data: []byte(`{}`)}}, "x.json"},
		{"nested too deep", fstest.MapFS{"a/b/x.json": {Data: []byte(`{}`)}}, "a/b/x.json"},
		{"not JSON", fstest.MapFS{"a/x.json": {Data: []byte(`{`)}}, "a/x.json"},
		{"dangling ref", fstest.MapFS{"a/x.json": {Data: []byte(`{"$ref":"../defs/nope.json"}`)}}, "a/x.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Builtin()
			if err != nil {
				t.Fatal(err)
			}
			before := len(r.Entries())
			err = r.AddFS(tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddFS = %v, want an error naming %s", err, tt.want)
			}
			if len(r.Entries()) != before {
				t.Error("a failed AddFS added entries")
			}
		})
	}
}

func TestValidateUnknownName(t *testing.T) {
	r := NewRegistry()
	err := r.Validate("nope", nil)
	if e, ok := errors.AsType[*UnknownSchemaError](err); !ok || e.Name != "nope" {
		t.Errorf("Validate = %v, want *UnknownSchemaError", err)
	}
}

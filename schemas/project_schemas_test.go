package schemas

import (
	"errors"
	"strings"
	"testing"
)

// TestProjectEventSchemas checks the "project" kind: the telemetry a
// project agent commits to its stream and emits. Each type is listed, a
// valid event of it passes, and an event missing a core field (or carrying
// a wrong one) is refused at that field's pointer.
func TestProjectEventSchemas(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	kinds := make(map[string]Entry)
	for _, e := range r.Entries() {
		kinds[e.Name] = e
	}
	// The fields each type's description promises, so the emitter and the
	// schema cannot drift apart silently.
	fields := map[string][]string{
		"project.started":         {"root", "data_dir", "policy", "policy_source", "protection", "restart"},
		"project.stopped":         {"reason"},
		"project.assets.loaded":   {"digest", "version", "counts", "diagnostics", "diagnostic_list"},
		"project.assets.reloaded": {"digest", "version", "counts", "diagnostics", "diagnostic_list", "changes", "skills", "commands", "workflows", "notes"},
		"project.tool.started":    {"tool", "call_id", "parent", "args"},
		"project.tool.completed":  {"tool", "call_id", "duration_ms", "parent", "size", "artifacts"},
		"project.tool.failed":     {"tool", "call_id", "duration_ms", "error", "parent"},
		"project.conv.started":    {"conversation", "id"},
		"project.conv.stopped":    {"conversation", "id", "reason"},
		"project.policy.changed":  {"policy", "policy_source", "previous_source", "changes"},
		"project.policy.refused":  {"file", "reason", "policy_source"},
	}
	for typ, fs := range fields {
		e, ok := kinds[typ]
		if !ok || e.Kind != "project" || e.Title == "" {
			t.Errorf("%s: entry %+v, want kind project with a title", typ, e)
			continue
		}
		for _, f := range fs {
			if !strings.Contains(e.Description, f) {
				t.Errorf("%s: description does not name %s: %s", typ, f, e.Description)
			}
		}
	}
	digest := strings.Repeat("0a", 32)
	const head = `{"specversion":"1.0","id":"e1","source":"/project/p1",`
	tests := []struct {
		name, data string
		pointer    string // "" means valid
	}{
		{"project.started", `{"root":"/src/p1","data_dir":".jido","protection":"landlock ABI 7","restart":true,"extra":1}`, ""},
		{"project.started", `{"data_dir":".jido"}`, "/data/root"},
		{"project.stopped", `{"reason":"closed"}`, ""},
		{"project.stopped", `{"reason":3}`, "/data/reason"},
		{"project.assets.loaded", `{"digest":"` + digest + `","version":1,"counts":{"skills":2,"commands":1,"workflows":0,"notes":5},"diagnostics":1,"diagnostic_list":[{"file":"skills/x/SKILL.md","line":3,"reason":"no name"}]}`, ""},
		{"project.assets.loaded", `{"digest":"` + digest + `","version":1,"diagnostics":[{"file":"x","reason":"y"}]}`, "/data/diagnostics"},
		{"project.assets.loaded", `{"digest":"` + digest + `","version":0}`, "/data/version"},
		{"project.assets.loaded", `{"digest":"abc","version":1}`, "/data/digest"},
		{"project.assets.reloaded", `{"digest":"` + digest + `","version":2,"diagnostics":0,"changes":{"commands":{"added":["git:commit"],"changed":["review"]},"notes":{"removed":["n1"]}}}`, ""},
		{"project.assets.reloaded", `{"digest":"` + digest + `","version":2,"changes":{"skills":{"added":"a"}}}`, "/data/changes/skills/added"},
		{"project.assets.reloaded", `{"version":2}`, "/data/digest"},
		{"project.tool.started", `{"tool":"read_file","call_id":"c1","args":{"path":"a.txt"}}`, ""},
		{"project.tool.started", `{"tool":"read_file"}`, "/data/call_id"},
		{"project.tool.completed", `{"tool":"grep","call_id":"c1","duration_ms":3,"size":120,"artifacts":[{"id":"sha256:` + strings.Repeat("ab", 32) + `","size":70000}]}`, ""},
		{"project.tool.completed", `{"tool":"grep","call_id":"c1","duration_ms":1.5,"result":"ok"}`, ""},
		{"project.tool.completed", `{"tool":"grep","call_id":"c1","duration_ms":-1}`, "/data/duration_ms"},
		{"project.tool.completed", `{"tool":"grep","call_id":"c1"}`, "/data/duration_ms"},
		{"project.tool.failed", `{"tool":"read_file","call_id":"c1","parent":"w1","duration_ms":0,"error":{"type":"outside_root","message":"path is outside","details":{"x":1}}}`, ""},
		{"project.tool.failed", `{"tool":"read_file","call_id":"c1","duration_ms":0}`, "/data/error"},
		{"project.tool.failed", `{"tool":"read_file","call_id":"c1","duration_ms":0,"error":{"type":"Outside Root","message":"x"}}`, "/data/error/type"},
		{"project.conv.started", `{"conversation":"c1","id":"p1/c1"}`, ""},
		{"project.conv.started", `{"conversation":"c1"}`, "/data/id"},
		{"project.conv.started", `{"conversation":"c1","id":"c1"}`, "/data/id"},
		{"project.conv.stopped", `{"conversation":"c1","id":"p1/c1","reason":"done"}`, ""},
		{"project.conv.stopped", `{"id":"p1/c1"}`, "/data/conversation"},
		{"project.conv.stopped", `{"conversation":"a/b","id":"p1/c1"}`, "/data/conversation"},
		{"project.policy.changed", `{"policy":{"tools":{"*":"allow","run_command":"ask"}},"policy_source":".jido/policy.yaml","previous_source":"default","changes":["tools.run_command: (none) -> ask"]}`, ""},
		{"project.policy.changed", `{"policy_source":".jido/policy.yaml"}`, "/data/policy"},
		{"project.policy.changed", `{"policy":{},"policy_source":""}`, "/data/policy_source"},
		{"project.policy.refused", `{"file":".jido/policy.yaml","reason":"[2:3] unknown field","policy_source":"default"}`, ""},
		{"project.policy.refused", `{"file":".jido/policy.yaml","policy_source":"default"}`, "/data/reason"},
	}
	for _, tt := range tests {
		err := r.Validate(tt.name, decode(t, head+`"type":"`+tt.name+`","data":`+tt.data+`}`))
		if tt.pointer == "" {
			if err != nil {
				t.Errorf("%s %s: valid event rejected: %v", tt.name, tt.data, err)
			}
			continue
		}
		ve, ok := errors.AsType[*ValidationError](err)
		if !ok || ve.Pointer() != tt.pointer {
			t.Errorf("%s %s: error %v, want one at %s", tt.name, tt.data, err, tt.pointer)
		}
	}
	// The type must be the schema's own.
	if err := r.Validate("project.started", decode(t, head+`"type":"project.stopped","data":{"root":"/r"}}`)); err == nil {
		t.Error("project.started accepted an event of type project.stopped")
	}
}

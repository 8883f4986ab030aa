package projects_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
	"github.com/jido-bus/jido-bus/schemas"
)

// TestStreamEntriesMatchTheirSchemas: every entry a project appends to its
// stream (and emits) is valid against the schema `jido-bus schema show`
// gives for its type, so a UI or a microservice can rely on the schemas:
// an open, a tool call that completes and one that fails, a reload with a
// change, a policy file followed and one refused, a close.
func TestStreamEntriesMatchTheirSchemas(t *testing.T) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	dir := projectDir(t)
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CallTool(ctx, "p1", tools.ToolCall{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CallTool(ctx, "p1", tools.ToolCall{ID: "c2", Name: "read_file", Args: json.RawMessage(`{"path":"nope.go"}`)}); err == nil {
		t.Fatal("reading a missing file succeeded")
	}
	if _, err := n.Conversations().Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Conversations().Stop(ctx, convapi.StopRequest{Project: "p1", Conversation: "c1", Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{".jido/commands/bye.md": "Bye.\n", ".jido/policy.yaml": "tools:\n  run_command: ask\n"})
	if _, err := e.Reload(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{".jido/policy.yaml": "tools: [\n"})
	if _, err := e.Reload(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	if err := e.CloseProject(ctx, "p1", "done"); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for en, err := range n.Log().ReadStream(projects.Stream("p1"), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		typ := en.Event.Type()
		if strings.HasPrefix(typ, "jido.") {
			continue
		}
		seen = append(seen, typ)
		b, err := json.Marshal(en.Event)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := reg.Validate(typ, v); err != nil {
			t.Errorf("%s: %v\n%s", typ, err, b)
		}
	}
	for _, typ := range []string{projects.TypeStarted, projects.TypeAssetsLoaded, projects.TypeToolStarted, projects.TypeToolCompleted, projects.TypeToolFailed, projects.TypeAssetsReloaded, projects.TypePolicyChanged, projects.TypePolicyRefused, projects.TypeConvStarted, projects.TypeConvStopped, projects.TypeStopped} {
		if !slices.Contains(seen, typ) {
			t.Errorf("no %s in the stream (saw %v)", typ, seen)
		}
	}
}

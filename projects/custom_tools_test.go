package projects_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// greet is a program's own tool: it counts its runs, so a test sees
// whether a refused call reached it.
func greet(runs *atomic.Int32) tools.Tool {
	return tools.Tool{
		Name:         "greet",
		Description:  "Greet someone.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"greeting":{"type":"string"}}}`),
		Safety:       tools.Safety{Reads: true},
		Func: func(_ context.Context, c *tools.Call) (any, error) {
			runs.Add(1)
			var in struct{ Who string }
			if err := json.Unmarshal(c.Args, &in); err != nil {
				return nil, err
			}
			return map[string]string{"greeting": "hello " + in.Who}, nil
		},
	}
}

func startNodeWithTools(t *testing.T, ts ...tools.Tool) (*node.Node, error) {
	t.Helper()
	return node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NoSync: true,
		NATS:     node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) { c.NoWatch, c.Tools = true, ts },
	})
}

func TestConfigToolsRunThroughTheRunner(t *testing.T) {
	var runs atomic.Int32
	n, err := startNodeWithTools(t, greet(&runs))
	if err != nil {
		t.Fatal(err)
	}
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	if _, err := e.Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: "p2", Policy: json.RawMessage(`{"tools":{"greet":"deny"}}`)}); err != nil {
		t.Fatal(err)
	}
	specs, err := e.Tools("p1")
	if err != nil || !slices.ContainsFunc(specs, func(s tools.Spec) bool { return s.Name == "greet" }) {
		t.Fatalf("p1's tools lack greet: %v %v", specs, err)
	}
	res, err := e.CallTool(ctx, "p1", tools.ToolCall{ID: "c1", Name: "greet", Args: json.RawMessage(`{"who":"ada"}`)})
	if err != nil || !strings.Contains(string(res.Data), "hello ada") {
		t.Fatalf("greet: %+v %v", res, err)
	}
	_, err = e.CallTool(ctx, "p1", tools.ToolCall{ID: "c2", Name: "greet", Args: json.RawMessage(`{"who":7}`)})
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonInvalidArgs {
		t.Fatalf("greet with a number: %v, want invalid_args", err)
	}
	_, err = e.CallTool(ctx, "p2", tools.ToolCall{ID: "c3", Name: "greet", Args: json.RawMessage(`{"who":"ada"}`)})
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonDenied {
		t.Fatalf("greet denied by p2's policy: %v, want denied", err)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("greet ran %d times, want 1: refused calls must not reach the Func", got)
	}
	types, data := entries(t, n, "p1")
	want := []string{projects.TypeStarted, projects.TypeAssetsLoaded,
		projects.TypeToolStarted, projects.TypeToolCompleted, projects.TypeToolStarted, projects.TypeToolFailed}
	if !slices.Equal(types, want) {
		t.Fatalf("p1's stream: %v, want %v", types, want)
	}
	if !strings.Contains(string(data[2]), `"greet"`) || !strings.Contains(string(data[5]), tools.ReasonInvalidArgs) {
		t.Errorf("records: %s / %s", data[2], data[5])
	}
	types, data = entries(t, n, "p2")
	if want := []string{projects.TypeStarted, projects.TypeAssetsLoaded, projects.TypeToolStarted, projects.TypeToolFailed}; !slices.Equal(types, want) {
		t.Fatalf("p2's stream: %v, want %v", types, want)
	}
	if !strings.Contains(string(data[3]), tools.ReasonDenied) {
		t.Errorf("p2's refusal: %s", data[3])
	}
}

func TestConfigToolsMayNotShadow(t *testing.T) {
	var runs atomic.Int32
	for _, c := range []struct{ name, want string }{
		{"read_file", "a built-in tool has that name"},
		{"skill_review", `"skill_"`},
		{"command_x", `"command_"`},
		{"workflow_x", `"workflow_"`},
		{"command.x", `"command."`},
	} {
		tool := greet(&runs)
		tool.Name = c.name
		n, err := startNodeWithTools(t, tool)
		if err == nil {
			closeNode(t, n)
			t.Errorf("a program tool named %s was taken", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("tool %s: %v, want it to say %s", c.name, err, c.want)
		}
	}
	if n, err := startNodeWithTools(t, greet(&runs), greet(&runs)); err == nil {
		closeNode(t, n)
		t.Error("two program tools named greet were taken")
	}
	bad := greet(&runs)
	bad.InputSchema = json.RawMessage(`{"type":"nonsense"}`)
	if n, err := startNodeWithTools(t, bad); err == nil {
		closeNode(t, n)
		t.Error("a program tool with an invalid input schema was taken")
	}
}

func TestServiceToolsServeTheirProjects(t *testing.T) {
	n, err := startNodeWithTools(t)
	if err != nil {
		t.Fatal(err)
	}
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	for _, id := range []string{"p1", "p2"} {
		if _, err := e.Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	var runs atomic.Int32
	svc := greet(&runs)
	svc.Name = "svc_greet"
	if err := e.SetServiceTools([]projects.ServiceTool{{Tool: svc, Projects: []string{"p1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CallTool(ctx, "p1", tools.ToolCall{Name: "svc_greet", Args: json.RawMessage(`{"who":"ada"}`)}); err != nil {
		t.Fatalf("svc_greet in p1: %v", err)
	}
	_, err = e.CallTool(ctx, "p2", tools.ToolCall{Name: "svc_greet", Args: json.RawMessage(`{"who":"ada"}`)})
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonUnknownTool {
		t.Fatalf("svc_greet in p2, which it does not serve: %v, want unknown_tool", err)
	}
	shadow := greet(&runs)
	shadow.Name = "write_file"
	if err := e.SetServiceTools([]projects.ServiceTool{{Tool: shadow}}); err == nil {
		t.Fatal("a service tool named write_file was taken")
	}
	if _, err := e.CallTool(ctx, "p1", tools.ToolCall{Name: "svc_greet", Args: json.RawMessage(`{"who":"ada"}`)}); err != nil {
		t.Fatalf("a refused update changed the tools: %v", err)
	}
	if err := e.SetServiceTools(nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.CallTool(ctx, "p1", tools.ToolCall{Name: "svc_greet", Args: json.RawMessage(`{"who":"ada"}`)})
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonUnknownTool {
		t.Fatalf("svc_greet after its withdrawal: %v, want unknown_tool", err)
	}
}

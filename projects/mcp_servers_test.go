package projects_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/mcpclient"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// buildMCPServer builds examples/mcp-server into dir (inside a project's
// root, where its commands may read it) and returns its path.
func buildMCPServer(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "bin", "mcpserver")
	cmd := exec.Command("go", "build", "-o", out, "../examples/mcp-server")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the test MCP server: %v\n%s", err, b)
	}
	return out
}

// mcpProject is a project whose config.yaml runs the test MCP server as
// "notes", with policy (YAML) as its policy.yaml; policy may use
// PROGRAM for the server's path.
func mcpProject(t *testing.T, policy string) (root, program string) {
	t.Helper()
	root = projectDir(t)
	program = buildMCPServer(t, root)
	writeFiles(t, root, map[string]string{
		".jido/config.yaml": "mcp_servers:\n  notes:\n    command: [" + program + "]\n",
		".jido/policy.yaml": strings.ReplaceAll(policy, "PROGRAM", program),
	})
	return root, program
}

func startMCPNode(t *testing.T) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NoSync: true,
		NATS:     node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) { c.NoWatch, c.MCPMinBackoff = true, 10*time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeNode(t, n) })
	return n
}

// waitServer waits until project id's one MCP server is in status after
// at least restarts restarts, and its catalog holds tool (unless "").
func waitServer(t *testing.T, e *projects.Engine, id, status string, restarts int, tool string) projects.ProjectInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		in, err := e.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		specs, _ := e.Tools(id)
		has := slices.ContainsFunc(specs, func(s tools.Spec) bool { return s.Name == tool })
		if len(in.MCPServers) == 1 && in.MCPServers[0].Status == status && in.MCPServers[0].Restarts >= restarts && (tool == "" || has) {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("project %s: MCP servers %+v, tool %s listed %v; want status %s", id, in.MCPServers, tool, has, status)
		}
		time.Sleep(5 * time.Millisecond) // polling the engine's state; nothing to wait on from outside
	}
}

func call(t *testing.T, e *projects.Engine, id, tool, args string) (tools.Result, error) {
	t.Helper()
	return e.CallTool(context.Background(), id, tools.ToolCall{Name: tool, Args: json.RawMessage(args)})
}

func TestMCPServerToolsJoinTheCatalog(t *testing.T) {
	n := startMCPNode(t)
	e := n.Projects()
	root, _ := mcpProject(t, "commands:\n  programs: [PROGRAM]\ntools:\n  notes.touch: deny\n")
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	waitServer(t, e, "p1", mcpclient.StatusReady, 0, "notes.echo")

	res, err := call(t, e, "p1", "notes.echo", `{"text":"hi"}`)
	if err != nil || !strings.Contains(string(res.Data), "echo: hi") {
		t.Fatalf("notes.echo: %s %v", res.Data, err)
	}
	details, err := e.ToolDetails("p1")
	if err != nil {
		t.Fatal(err)
	}
	safety := map[string]tools.Safety{}
	for _, d := range details {
		safety[d.Name] = d.Safety
	}
	if s := safety["notes.echo"]; !s.Reads || s.Writes {
		t.Errorf("notes.echo (readOnlyHint) has safety %+v, want a reader", s)
	}
	if s := safety["notes.read"]; !s.Writes {
		t.Errorf("notes.read (no annotations) has safety %+v, want writes", s)
	}
	if _, ok := safety["notes.touch"]; ok {
		t.Errorf("notes.touch is offered though the policy denies it")
	}
	_, err = call(t, e, "p1", "notes.touch", `{"text":"x"}`)
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonDenied {
		t.Fatalf("notes.touch under deny: %v, want denied", err)
	}
	_, err = e.CallTool(context.Background(), "p1", tools.ToolCall{Name: "notes.echo", Mode: conversation.ModePlan, Args: json.RawMessage(`{"text":"plan"}`)})
	if err != nil {
		t.Errorf("notes.echo (read-only) in plan mode: %v", err)
	}
	_, err = e.CallTool(context.Background(), "p1", tools.ToolCall{Name: "notes.read", Mode: conversation.ModePlan, Args: json.RawMessage(`{"path":"main.go"}`)})
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonPlanMode {
		t.Errorf("notes.read (unannotated) in plan mode: %v, want plan_mode", err)
	}

	// tools/list_changed: a tool the server adds joins the catalog.
	if _, err := call(t, e, "p1", "notes.add_tool", `{}`); err != nil {
		t.Fatal(err)
	}
	waitServer(t, e, "p1", mcpclient.StatusReady, 0, "notes.late")

	// The server dies: its tools fail with unavailable naming it, it is
	// started again, and its tools work again.
	_, err = call(t, e, "p1", "notes.crash", `{}`)
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonUnavailable || !strings.Contains(te.Message, "notes") {
		t.Fatalf("notes.crash: %v, want unavailable naming the server", err)
	}
	waitServer(t, e, "p1", mcpclient.StatusReady, 1, "notes.echo")
	if res, err := call(t, e, "p1", "notes.echo", `{"text":"again"}`); err != nil || !strings.Contains(string(res.Data), "echo: again") {
		t.Fatalf("notes.echo after the restart: %s %v", res.Data, err)
	}

	types, _ := entries(t, n, "p1")
	if !slices.Contains(types, projects.TypeToolCompleted) || !slices.Contains(types, projects.TypeToolFailed) {
		t.Errorf("the MCP tools' calls are not logged like built-ins': %v", types)
	}
}

func TestMCPServerIsConfinedLikeRunCommand(t *testing.T) {
	n := startMCPNode(t)
	e := n.Projects()
	root, _ := mcpProject(t, "commands:\n  programs: [PROGRAM]\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("the node's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	waitServer(t, e, "p1", mcpclient.StatusReady, 0, "notes.read")
	res, err := call(t, e, "p1", "notes.read", `{"path":"main.go"}`)
	if err != nil || !strings.Contains(string(res.Data), "package main") {
		t.Fatalf("notes.read of a file of the project: %s %v", res.Data, err)
	}
	res, err = call(t, e, "p1", "notes.read", `{"path":"`+outside+`"}`)
	if err == nil || strings.Contains(string(res.Data), "secret") {
		t.Fatalf("notes.read of a file outside the root: %s %v, want it refused by the sandbox", res.Data, err)
	}
}

func TestMCPServerNotInProgramsIsNotStarted(t *testing.T) {
	n := startMCPNode(t)
	e := n.Projects()
	root, _ := mcpProject(t, "commands:\n  programs: [go]\n")
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	in := waitServer(t, e, "p1", mcpclient.StatusRestarting, 0, "")
	if !strings.Contains(in.MCPServers[0].Error, "commands.programs") {
		t.Errorf("a server whose program the policy does not list: %+v, want an error naming commands.programs", in.MCPServers[0])
	}
	specs, _ := e.Tools("p1")
	if slices.ContainsFunc(specs, func(s tools.Spec) bool { return strings.HasPrefix(s.Name, "notes.") }) {
		t.Errorf("a server that never started has tools: %v", specs)
	}
}

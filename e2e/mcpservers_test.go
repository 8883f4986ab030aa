package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// mcpServerPIDs are the processes running program (the node starts
// the MCP server in the sandbox, so the test finds it as an operator
// would: by its executable).
func mcpServerPIDs(t *testing.T, program string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == program {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestMCPServersThroughTheBinary: a project's .jido/config.yaml lists a
// stdio MCP server (examples/mcp-server); the node runs it confined as
// run_command, and its tools are the project's as notes.<tool>: listed by
// project tools, called by project call and by the assistant (the
// scripted model), refused by the policy, logged on the project's stream,
// and a conversation that used one replays with --verify. A tool the
// server adds (tools/list_changed) joins the catalog; the server killed
// with SIGKILL is restarted and works again; a read outside the root is
// refused by the sandbox.
func TestMCPServersThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := filepath.Join(t.TempDir(), "mcp")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	program, err := tools.BuildProgram(filepath.Join(root, "bin"), "./examples/mcp-server")
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("not the project's"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeProjectTree(t, root, map[string]string{
		".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n" +
			"mcp_servers:\n  notes:\n    command: [" + program + "]\n",
		".jido/script.jsonl": `{"text":"Asking notes.","tool_calls":[{"id":"n1","name":"notes_echo","args":{"text":"from the model"}}]}` + "\n" +
			`{"text":"notes answered."}` + "\n",
		".jido/policy.yaml": "commands:\n  programs: [" + program + "]\ntools:\n  notes.touch: deny\n",
		"notes.txt":         "hello\n",
	})
	rig.run(t, "project", "open", root, "--id", "mcp")

	if out := rig.run(t, "project", "tools", "mcp"); !strings.Contains(out, "notes.echo") || !strings.Contains(out, "notes.read") || strings.Contains(out, "notes.touch") ||
		!strings.Contains(out, "MCP server notes ready") {
		t.Fatalf("project tools mcp: want notes.echo and notes.read, not the denied notes.touch, and the server ready:\n%s", out)
	}
	if out := rig.run(t, "project", "call", "mcp", "notes.echo", `{"text":"hi"}`); !strings.Contains(out, "echo: hi") {
		t.Fatalf("project call notes.echo: %s", out)
	}
	_, stderr, err := tryRun("project", "call", "mcp", "notes.touch", `{"text":"x"}`, "--nats-url", rig.node.URL)
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 5 || !strings.Contains(stderr, "denied") {
		t.Fatalf("project call notes.touch under deny: %v %s, want exit 5 denied", err, stderr)
	}
	if out := rig.run(t, "project", "call", "mcp", "notes.read", `{"path":"notes.txt"}`); !strings.Contains(out, "hello") {
		t.Fatalf("notes.read of the project's file: %s", out)
	}
	out, stderr, err := tryRun("project", "call", "mcp", "notes.read", `{"path":"`+outside+`"}`, "--nats-url", rig.node.URL)
	if err == nil || strings.Contains(out+stderr, "not the project's") {
		t.Fatalf("notes.read outside the root: %v %s %s, want the sandbox to refuse it", err, out, stderr)
	}

	// Through the assistant: the scripted model calls notes_echo, the
	// API name of notes.echo.
	conv := rig.startConv(t, "mcp", "c1")
	rig.run(t, "conv", "send", conv, "ask notes")
	es := rig.awaitAnswer(t, conv, "notes answered.")
	if !es.has("conversation.tool.completed", "echo: from the model") || len(es.call("conversation.tool.started", "n1")) != 1 {
		t.Fatalf("the conversation's notes.echo call:\n%s", es)
	}
	rig.replayVerifies(t, conv)
	if log := rig.run(t, "log", "show", "project/mcp", "--type", "project.tool.completed", "-o", "json"); !strings.Contains(log, `"tool":"notes.echo"`) {
		t.Fatalf("project/mcp does not log notes.echo like a built-in:\n%s", log)
	}

	// tools/list_changed: the server adds notes.late.
	rig.run(t, "project", "call", "mcp", "notes.add_tool")
	testkit.EventuallyNil(t, "notes.late listed", func() error {
		if out := rig.run(t, "project", "tools", "mcp"); !strings.Contains(out, "notes.late") {
			return fmt.Errorf("project tools:\n%s", out)
		}
		return nil
	})

	// The server crashes: the call says unavailable and names it.
	_, stderr, err = tryRun("project", "call", "mcp", "notes.crash", "--nats-url", rig.node.URL)
	if err == nil || !strings.Contains(stderr, "unavailable") || !strings.Contains(stderr, "MCP server notes") {
		t.Fatalf("project call notes.crash: %v %s, want unavailable naming the server", err, stderr)
	}
	awaitRestarts(t, rig, 1)
	// Killed from outside, as an unlucky operator would.
	pids := mcpServerPIDs(t, program)
	if len(pids) == 0 {
		t.Fatalf("no process runs %s", program)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	awaitRestarts(t, rig, 2)
	if out := rig.run(t, "project", "call", "mcp", "notes.echo", `{"text":"back"}`); !strings.Contains(out, "echo: back") {
		t.Fatalf("notes.echo after the restart: %s", out)
	}
}

// awaitRestarts waits until project get says the notes server is ready
// after at least n restarts.
func awaitRestarts(t *testing.T, rig *assistantRig, n int) {
	t.Helper()
	testkit.EventuallyNil(t, fmt.Sprintf("notes ready after %d restarts", n), func() error {
		out := rig.run(t, "project", "get", "mcp", "-o", "json")
		var info struct {
			MCPServers []struct {
				Name, Status string
				Restarts     int
			} `json:"mcp_servers"`
		}
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			return err
		}
		if len(info.MCPServers) == 1 && info.MCPServers[0].Status == "ready" && info.MCPServers[0].Restarts >= n {
			return nil
		}
		return fmt.Errorf("project get:\n%s", out)
	})
}

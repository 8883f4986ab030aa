package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdioOverNATS launches `jido-bus mcp --project PATH --nats-url`
// against a running `jido-bus serve`, as an IDE would: the project is
// opened on that node, its tools are listed and called through the
// node's runner (a path escape is isError), and the node's project
// stream has the calls.
func TestMCPStdioOverNATS(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(tools.JidoBus, "mcp", "--project", proj, "--id", "remote", "--nats-url", node.URL)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) == 0 {
		t.Fatalf("tools: %+v %v", lt, err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "package main") {
		t.Fatalf("read_file: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../../../etc/passwd"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "outside_root") {
		t.Errorf("path escape: %+v %v, want isError outside_root", res, err)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("jido-bus mcp did not exit cleanly once stdin closed: %v\n%s", cmd.ProcessState, stderr.String())
	}
	out := tools.Run(t, "log", "show", "project/remote", "--nats-url", node.URL, "--output", "json")
	for _, want := range []string{"project.tool.completed", "project.tool.failed", "outside_root"} {
		if !strings.Contains(out, want) {
			t.Errorf("project/remote's stream lacks %s:\n%s", want, out)
		}
	}
}

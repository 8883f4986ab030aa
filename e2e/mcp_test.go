package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdio launches `jido-bus mcp --project PATH` the way an IDE
// does, as a command the go-sdk client talks to on stdin/stdout: it lists
// the tools, reads a file, gets a command as a prompt, is refused a path
// escape (isError), and the calls are in the project's stream after.
func TestMCPStdio(t *testing.T) {
	proj := t.TempDir()
	for name, content := range map[string]string{
		"main.go":                 "package main\n",
		".jido/commands/hello.md": "---\ndescription: Say hello.\n---\nHello $ARGUMENTS\n",
	} {
		p := filepath.Join(proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(tools.JidoBus, "mcp", "--project", proj, "--id", "ide", "--data-dir", data)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}

	mcpReadAndEscape(t, ctx, cs, "main.go", "package main")

	pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "hello", Arguments: map[string]string{"arguments": "world"}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := pr.Messages[0].Content.(*sdk.TextContent).Text; !strings.Contains(txt, "Hello world") {
		t.Errorf("prompt hello: %q, want Hello world", txt)
	}

	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err) // the process exits when its stdin closes
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("jido-bus mcp did not exit cleanly once stdin closed: %v\n%s", cmd.ProcessState, stderr.String())
	}

	// The project's stream has each request, by the stdio caller.
	out := tools.Run(t, "log", "show", "project/ide", "--data-dir", data, "--output", "json")
	for _, want := range []string{`"method":"tools/call"`, `"method":"prompts/get"`, `"name":"stdio"`, `"result":"outside_root"`} {
		if !strings.Contains(out, want) {
			t.Errorf("project/ide's stream lacks %s:\n%s", want, out)
		}
	}
}

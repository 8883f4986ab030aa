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
	var stderr testkit.Buffer
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

// TestMCPStdioOddLines pipes requests into `jido-bus mcp` with odd lines
// among them (trailing bytes after a message, two messages on a line,
// not JSON): each odd line gets a parse error, every request after it
// its answer, and the process exits 0 at the end of its input. One odd
// line used to end the process with "invalid trailing data at the end of
// stream".
func TestMCPStdioOddLines(t *testing.T) {
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"} x`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}{"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`not json`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"main.go"}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(tools.JidoBus, "mcp", "--project", proj, "--data-dir", t.TempDir())
	cmd.Stdin = strings.NewReader(in)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jido-bus mcp: %v\n%s", err, stderr.String())
	}
	text := string(out)
	if n := strings.Count(text, `"code":-32700`); n != 3 {
		t.Errorf("%d parse errors, want 3 (one per odd line):\n%s", n, text)
	}
	if !strings.Contains(text, `"id":5,"result"`) || !strings.Contains(text, "package main") {
		t.Errorf("the read after the odd lines was not answered:\n%s", text)
	}
}

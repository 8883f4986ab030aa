package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
)

// serveMCP runs `jido-bus mcp args…` with in-memory pipes for its stdin
// and stdout and connects the go-sdk client to it. The returned func
// closes the client and returns the command's error and stderr.
func serveMCP(t *testing.T, ctx context.Context, opts *sdk.ClientOptions, args ...string) (*sdk.ClientSession, func() (string, error)) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	var stderr bytes.Buffer
	root := newRootCmd()
	root.SetIn(sr)
	root.SetOut(sw)
	root.SetErr(&stderr)
	root.SetArgs(append([]string{"mcp"}, args...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); sw.Close() }()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		cw.Close()
		err2 := <-done
		t.Fatalf("connect: %v (mcp: %v; stderr %s)", err, err2, stderr.String())
	}
	return cs, func() (string, error) {
		cs.Close()
		err := <-done
		return stderr.String(), err
	}
}

// TestMCPOverNATS: `jido-bus mcp --nats-url` serves a project of a
// running node: it opens PATH there, lists its tools with their output
// schemas and hints, runs read_file through the node's runner and
// returns a path escape as isError.
func TestMCPOverNATS(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.go": "package main\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cs, stop := serveMCP(t, ctx, nil, "--project", dir, "--nats-url", n.URL(), "--id", "p1")
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rf *sdk.Tool
	for _, tl := range lt.Tools {
		if tl.Name == "read_file" {
			rf = tl
		}
	}
	if rf == nil {
		t.Fatalf("no read_file in %d tools", len(lt.Tools))
	}
	if rf.Annotations == nil || !rf.Annotations.ReadOnlyHint {
		t.Errorf("read_file is not read-only over NATS: %+v", rf.Annotations)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "package main") {
		t.Errorf("read_file: %+v", res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../../etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Type string }
	if !res.IsError || json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &e) != nil || e.Type != "outside_root" {
		t.Errorf("escape: %+v", res)
	}
	if stderr, err := stop(); err != nil {
		t.Errorf("mcp after the client left: %v\n%s", err, stderr)
	}
	// The project stays open on the node, at PATH; a second server finds it.
	real, _ := filepath.EvalSymlinks(dir)
	if id := n.ProjectOn(real); id != "p1" {
		t.Errorf("project on %s: %q, want p1", real, id)
	}
	cs, stop = serveMCP(t, ctx, nil, "--project", dir, "--nats-url", n.URL())
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Error(err)
	}
	if stderr, err := stop(); err != nil {
		t.Errorf("second mcp: %v\n%s", err, stderr)
	}
}

// TestMCPOverNATSRefusals: flags that cannot go together, and a node
// that is not there, are refused with a sentence saying what to do.
func TestMCPOverNATSRefusals(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--project", dir, "--nats-url", "nats://example.invalid:4222", "--data-dir", t.TempDir()}, "--data-dir"},
		{[]string{"mcp", "--project", dir, "--data-dir", t.TempDir(), "--token", "x"}, "--nats-url"},
	} {
		out, err := runRoot(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v\n%s", c.args, err, out)
		}
	}
}

// TestMCPOverNATSFeatures: prompts and their expansion come from the
// node's project API; an asset edit on the node reaches the client as
// list_changed; what the API cannot carry is refused saying what to do
// instead: a tool the policy marks ask (no approval over NATS), and a
// result's resource_link (no artifact API).
func TestMCPOverNATSFeatures(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".jido/commands/hello.md": "---\ndescription: Say hello.\n---\nHello $ARGUMENTS\n",
		".jido/policy.yaml":       "tools:\n  \"*\": allow\n  write_file: ask\n",
		"big.txt":                 strings.Repeat("a line of a large file\n", 4000),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	changed := make(chan struct{}, 10)
	cs, stop := serveMCP(t, ctx, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}, "--project", dir, "--nats-url", n.URL())
	defer stop()

	gp, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "hello", Arguments: map[string]string{"arguments": "you"}})
	if err != nil || len(gp.Messages) == 0 || !strings.Contains(gp.Messages[0].Content.(*sdk.TextContent).Text, "Hello you") {
		t.Errorf("prompt hello over NATS: %+v %v", gp, err)
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "x.txt", "content": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "approval_required") ||
		!strings.Contains(res.Content[0].(*sdk.TextContent).Text, "--nats-url") {
		t.Errorf("an ask tool over NATS: %+v", res.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("an ask tool ran without approval")
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "big.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read big.txt: %+v %v", res, err)
	}
	var link *sdk.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*sdk.ResourceLink); ok {
			link = l
		}
	}
	if link == nil {
		t.Fatalf("no resource_link for a large output: %+v", res.Content)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: link.URI}); err == nil || !strings.Contains(err.Error(), "cannot read the node's artifact store") {
		t.Errorf("artifact over NATS: %v, want a refusal naming it", err)
	}

	writeTree(t, dir, map[string]string{".jido/commands/bye.md": "Bye $1\n"})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after an asset edit on the node")
	}
}

// TestMCPOverNATSRoles: on a node with users, a client may not open a
// project (refused, saying to open it as an operator) nor call its tools
// (isError forbidden) but lists them; an operator opens and calls. A
// project root the node does not have is refused with the node's reason,
// without the role hint.
func TestMCPOverNATSRoles(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	var users []node.User
	for _, r := range []string{node.RoleClient, node.RoleOperator} {
		h, err := bcrypt.GenerateFromPassword([]byte(r+"pw"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, node.User{Name: r, Password: string(h), Role: r})
	}
	n, err := node.Start(context.Background(), node.Config{DataDir: t.TempDir(), NoSync: true,
		NATS: node.NATSConfig{Listen: "127.0.0.1:0", Users: users}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.go": "package main\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	as := func(role string) []string {
		return []string{"--nats-url", n.URL(), "--user", role, "--password", role + "pw"}
	}

	out, err := runRoot(t, append([]string{"mcp", "--project", dir}, as(node.RoleClient)...)...)
	if err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "as an operator") {
		t.Errorf("a client opening a project: %v\n%s", err, out)
	}
	out, err = runRoot(t, append([]string{"mcp", "--project", filepath.Join(dir, "nope")}, as(node.RoleOperator)...)...)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "operator") {
		t.Errorf("a root the node does not have: %v\n%s", err, out)
	}

	cs, stop := serveMCP(t, ctx, nil, append([]string{"--project", dir}, as(node.RoleOperator)...)...)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil || res.IsError {
		t.Errorf("read_file as an operator: %+v %v", res, err)
	}
	if stderr, err := stop(); err != nil {
		t.Errorf("mcp as an operator: %v\n%s", err, stderr)
	}

	cs, stop = serveMCP(t, ctx, nil, append([]string{"--project", dir}, as(node.RoleClient)...)...)
	defer stop()
	if lt, err := cs.ListTools(ctx, nil); err != nil || len(lt.Tools) == 0 {
		t.Errorf("tools as a client: %+v %v", lt, err)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "forbidden") {
		t.Errorf("read_file as a client: %+v %v", res, err)
	}
}

// TestMCPOverNATSNodeRestart: the server outlives its node. While the
// node is down a call is isError unavailable (the session stays); once it
// is back on the same address, calls run again.
func TestMCPOverNATSNodeRestart(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	data := t.TempDir()
	n := startNode(t, data)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.go": "package main\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, stop := serveMCP(t, ctx, nil, "--project", dir, "--nats-url", n.URL())
	defer stop()
	call := func() *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(); res.IsError {
		t.Fatalf("read_file: %+v", res.Content)
	}
	addr := strings.TrimPrefix(n.URL(), "nats://")
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := call(); !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "unavailable") {
		t.Errorf("read_file with the node down: %+v", res.Content)
	}
	n, err := node.Start(context.Background(), node.Config{DataDir: data, NATS: node.NATSConfig{Listen: addr}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	// Polling the reconnect: nothing to await from outside.
	testkit.EventuallyNil(t, "read_file to run once the node came back", func() error {
		if res := call(); res.IsError {
			return fmt.Errorf("%+v", res.Content)
		}
		return nil
	})
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serveMCP runs `jido-bus mcp args…` with in-memory pipes for its stdin
// and stdout and connects the go-sdk client to it. The returned func
// closes the client and returns the command's error and stderr.
func serveMCP(t *testing.T, ctx context.Context, args ...string) (*sdk.ClientSession, func() (error, string)) {
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
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		cw.Close()
		err2 := <-done
		t.Fatalf("connect: %v (mcp: %v; stderr %s)", err, err2, stderr.String())
	}
	return cs, func() (error, string) {
		cs.Close()
		return <-done, stderr.String()
	}
}

// TestMCPOverNATS: `jido-bus mcp --nats-url` serves a project of a
// running node: it opens PATH there, lists its tools with their output
// schemas and hints, runs read_file through the node's runner and
// returns a path escape as isError.
func TestMCPOverNATS(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Close(10 * time.Second)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.go": "package main\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cs, stop := serveMCP(t, ctx, "--project", dir, "--nats-url", n.URL(), "--id", "p1")
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
	if err, stderr := stop(); err != nil {
		t.Errorf("mcp after the client left: %v\n%s", err, stderr)
	}
	// The project stays open on the node, at PATH; a second server finds it.
	real, _ := filepath.EvalSymlinks(dir)
	if id := n.ProjectOn(real); id != "p1" {
		t.Errorf("project on %s: %q, want p1", real, id)
	}
	cs, stop = serveMCP(t, ctx, "--project", dir, "--nats-url", n.URL())
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Error(err)
	}
	if err, stderr := stop(); err != nil {
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

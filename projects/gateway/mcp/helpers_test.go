package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

// env is a node with project "p1" open (the watcher on) and the MCP
// gateway over HTTP.
type env struct {
	n   *node.Node
	g   *mcpgw.Gateway
	srv *httptest.Server
	dir string
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func start(t *testing.T) *env {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NoSync: true,
		NATS:     node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) { c.Debounce = 20 * time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Errorf("close node: %v", err)
		}
	})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.go":                        "package main\n",
		"big.txt":                        strings.Repeat("a line of a large file\n", 20000),
		".jido/policy.yaml":              "tools:\n  \"*\": allow\n  write_file: ask\n",
		".jido/skills/review/SKILL.md":   "---\nname: review\ndescription: Review a change.\n---\nRead the diff.\n",
		".jido/commands/hello.md":        "---\ndescription: Say hello.\nargument-hint: NAME\n---\nHello $ARGUMENTS from {{place}}\n@main.go\n",
		".jido/skill_graph/index.md":     "# Index\nSee [[topics/go]].\n",
		".jido/skill_graph/topics/go.md": "# Go\nGo notes.\n",
	})
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	g := mcpgw.New(n.MCPHost(), mcpgw.Options{Version: "test"})
	t.Cleanup(func() { _ = g.Close() })
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	return &env{n: n, g: g, srv: srv, dir: dir}
}

// connect is a go-sdk client session on path of e's server.
func (e *env) connect(t *testing.T, path string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.srv.URL + path}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// records are project's project.gateway.request entries.
func records(t *testing.T, n *node.Node, project string) []gateway.Request {
	t.Helper()
	var rs []gateway.Request
	for e, err := range n.Log().ReadStream(projects.Stream(project), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type() != projects.TypeGatewayRequest {
			continue
		}
		var r gateway.Request
		if err := json.Unmarshal(e.Event.Data(), &r); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// findRecord is the last record of method and target, or fails.
func findRecord(t *testing.T, n *node.Node, project, method, target string) gateway.Request {
	t.Helper()
	rs := records(t, n, project)
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Method == method && rs[i].Target == target {
			return rs[i]
		}
	}
	t.Fatalf("no record of %s %s in %s's stream: %+v", method, target, project, rs)
	return gateway.Request{}
}

// errorOf is the {"type","message"} of an isError result.
func errorOf(t *testing.T, res *sdk.CallToolResult) (typ, msg string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want isError, got %+v", res)
	}
	var e struct{ Type, Message string }
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &e); err != nil {
		t.Fatal(err)
	}
	return e.Type, e.Message
}

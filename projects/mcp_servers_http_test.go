package projects_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/mcpclient"
)

// httpMCPServer serves an MCP server with the tool "echo" over streamable
// HTTP at /mcp on 127.0.0.1:0; auth keeps the last Authorization header
// it got, or "dialed PATH" for a request to any other path.
func httpMCPServer(t *testing.T, auth *atomic.Value) (url string, srv *mcp.Server) {
	t.Helper()
	srv = mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "remote: " + a.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			auth.Store("dialed " + r.URL.Path)
			http.NotFound(w, r)
			return
		}
		auth.Store(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		hs.Close()
	})
	return "http://" + ln.Addr().String() + "/mcp", srv
}

func TestMCPServerOverStreamableHTTP(t *testing.T) {
	var auth atomic.Value
	url, srv := httpMCPServer(t, &auth)
	t.Setenv("TEST_MCP_TOKEN", "operator-token")
	n, err := node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NoSync: true,
		NATS: node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) {
			c.NoWatch, c.MCPMinBackoff = true, 10*time.Millisecond
			c.MCPRemotes = []projects.MCPRemote{{URL: url, BearerEnv: "TEST_MCP_TOKEN"}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeNode(t, n)
	e := n.Projects()

	root := projectDir(t)
	writeFiles(t, root, map[string]string{".jido/config.yaml": "mcp_servers:\n  remote: {url: \"" + url + "\"}\n"})
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	waitServer(t, e, "p1", mcpclient.StatusReady, 0, "remote.echo")
	res, err := call(t, e, "p1", "remote.echo", `{"text":"hi"}`)
	if err != nil || !strings.Contains(string(res.Data), "remote: hi") {
		t.Fatalf("remote.echo: %s %v", res.Data, err)
	}
	if got, _ := auth.Load().(string); got != "Bearer operator-token" {
		t.Errorf("the server got Authorization %q, want the operator's token", got)
	}

	// tools/list_changed over HTTP.
	mcp.AddTool(srv, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	waitServer(t, e, "p1", mcpclient.StatusReady, 0, "remote.late")

	// A URL the operator did not list is refused, and never dialed.
	other := projectDir(t)
	writeFiles(t, other, map[string]string{".jido/config.yaml": "mcp_servers:\n  remote: {url: \"" + url + "/other\"}\n"})
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: other, ID: "p2"}); err != nil {
		t.Fatal(err)
	}
	in, err := e.Get("p2")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.MCPServers) != 1 || in.MCPServers[0].Status != mcpclient.StatusRefused || !strings.Contains(in.MCPServers[0].Error, "operator") {
		t.Fatalf("a URL the operator does not allow: %+v, want refused", in.MCPServers)
	}
	if got, _ := auth.Load().(string); strings.HasPrefix(got, "dialed") {
		t.Errorf("the refused URL was %s", got)
	}
}

// TestMCPRemoteTokenStaysWithItsHost: a remote that redirects to another
// host does not get the operator's token sent there.
func TestMCPRemoteTokenStaysWithItsHost(t *testing.T) {
	var elsewhere atomic.Value
	thief := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Store(r.Header.Get("Authorization"))
		http.NotFound(w, r)
	})}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go thief.Serve(tl)
	defer thief.Close()
	redirect := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+tl.Addr().String()+"/mcp", http.StatusTemporaryRedirect)
	})}
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go redirect.Serve(rl)
	defer redirect.Close()
	url := "http://" + rl.Addr().String() + "/mcp"
	t.Setenv("TEST_MCP_TOKEN", "operator-token")
	n, err := node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NoSync: true,
		NATS: node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) {
			c.NoWatch, c.MCPMinBackoff = true, 10*time.Millisecond
			c.MCPRemotes = []projects.MCPRemote{{URL: url, BearerEnv: "TEST_MCP_TOKEN"}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeNode(t, n)
	root := projectDir(t)
	writeFiles(t, root, map[string]string{".jido/config.yaml": "mcp_servers:\n  remote: {url: \"" + url + "\"}\n"})
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	got, seen := elsewhere.Load().(string)
	if !seen {
		t.Fatalf("the redirect was not followed; the test proves nothing")
	}
	if got != "" {
		t.Errorf("the other host got Authorization %q", got)
	}
}

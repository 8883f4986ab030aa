package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpMCPLog is what the test's HTTP MCP server saw: each request's path
// and Authorization header.
type httpMCPLog struct {
	mu    sync.Mutex
	paths []string
	auths []string
}

func (l *httpMCPLog) seen() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.paths), slices.Clone(l.auths)
}

// startHTTPMCPServer serves an MCP server over streamable HTTP on
// 127.0.0.1:0 with one read-only tool, lookup, answering only requests
// that carry token; it records every request.
func startHTTPMCPServer(t *testing.T, token string) (string, *httpMCPLog) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "issues", Version: "1"}, nil)
	type args struct {
		ID string `json:"id"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Description: "Look an issue up.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "issue " + a.ID + ": open"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	log := &httpMCPLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.paths = append(log.paths, r.URL.Path)
		log.auths = append(log.auths, r.Header.Get("Authorization"))
		log.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		// The node, killed, never ended its session: end it here, so
		// that no goroutine of it outlives the test.
		for ss := range s.Sessions() {
			ss.Close()
		}
	})
	return srv.URL + "/mcp", log
}

// TestMCPRemoteThroughTheBinary: serve --mcp-remote URL,bearer_env=VAR
// lets a project's mcp_servers: {url: URL} use a streamable-HTTP server:
// its tool is the project's as issues.lookup, called by project call and
// by the scripted model, logged, replayed with --verify; the server got
// the operator's token. A URL the operator did not list is refused and
// never requested; no command of the project sees the token's variable;
// serve refuses to start with the variable unset, or handed to commands.
func TestMCPRemoteThroughTheBinary(t *testing.T) {
	const token = "e2e-mcp-remote-token-7"
	url, seen := startHTTPMCPServer(t, token)
	t.Setenv("E2E_MCP_TOKEN", token) // the serve child inherits it

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mcp-remote", url + ",bearer_env=E2E_MCP_UNSET"}, "export E2E_MCP_UNSET="},
		{[]string{"--mcp-remote", "http://192.0.2.1/mcp"}, "use https"},
		{[]string{"--mcp-remote", url + ",bearer_env=E2E_MCP_TOKEN", "--command-env", "PATH,E2E_MCP_TOKEN"}, "E2E_MCP_TOKEN holds one of this node's secrets"},
	} {
		args := append([]string{"serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0"}, c.args...)
		_, stderr, err := tryRun(args...)
		if err == nil || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %q: %v %s, want it refused saying %q", c.args, err, stderr, c.want)
		}
	}

	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.node = StartNode(t, tools, rig.dataDir, "--mcp-remote", url+",bearer_env=E2E_MCP_TOKEN")
	root := filepath.Join(t.TempDir(), "remote")
	writeProjectTree(t, root, map[string]string{
		".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n" +
			"mcp_servers:\n  issues: {url: \"" + url + "\"}\n",
		".jido/script.jsonl": `{"text":"Asking issues.","tool_calls":[{"id":"i1","name":"issues_lookup","args":{"id":"42"}}]}` + "\n" +
			`{"text":"issues answered."}` + "\n",
		".jido/policy.yaml": "commands:\n  programs: [env]\n",
	})
	rig.run(t, "project", "open", root, "--id", "remote")
	if out := rig.run(t, "project", "tools", "remote"); !strings.Contains(out, "issues.lookup") || !strings.Contains(out, "MCP server issues ready") {
		t.Fatalf("project tools remote: want issues.lookup and the server ready:\n%s", out)
	}
	if out := rig.run(t, "project", "call", "remote", "issues.lookup", `{"id":"7"}`); !strings.Contains(out, "issue 7: open") {
		t.Fatalf("project call issues.lookup: %s", out)
	}
	if log := rig.run(t, "log", "show", "project/remote", "--type", "project.tool.completed", "-o", "json"); !strings.Contains(log, `"tool":"issues.lookup"`) {
		t.Fatalf("project/remote does not log issues.lookup:\n%s", log)
	}
	paths, auths := seen.seen()
	if len(auths) == 0 || slices.ContainsFunc(auths, func(a string) bool { return a != "Bearer "+token }) {
		t.Fatalf("the server got Authorization %q, want the operator's token on every request", auths)
	}

	// No command of the project sees the token or its variable.
	if out := rig.run(t, "project", "call", "remote", "run_command", `{"argv":["env"]}`, "-o", "json"); strings.Contains(out, "E2E_MCP_TOKEN") || strings.Contains(out, token) || !strings.Contains(out, "PATH=") {
		t.Fatalf("run_command env shows the bearer variable (or did not run):\n%s", out)
	}

	// The scripted model calls issues_lookup, the API name of issues.lookup.
	conv := rig.startConv(t, "remote", "c1")
	rig.run(t, "conv", "send", conv, "ask issues")
	es := rig.awaitAnswer(t, conv, "issues answered.")
	if !es.has("conversation.tool.completed", "issue 42: open") || len(es.call("conversation.tool.started", "i1")) != 1 {
		t.Fatalf("the conversation's issues.lookup call:\n%s", es)
	}
	rig.replayVerifies(t, conv)

	// A URL the operator did not list: refused, never requested.
	other := filepath.Join(t.TempDir(), "other")
	writeProjectTree(t, other, map[string]string{
		".jido/config.yaml": "mcp_servers:\n  issues: {url: \"" + strings.TrimSuffix(url, "/mcp") + "/other\"}\n",
	})
	rig.run(t, "project", "open", other, "--id", "other")
	if out := rig.run(t, "project", "get", "other", "-o", "json"); !strings.Contains(out, `"status":"refused"`) || !strings.Contains(out, "--mcp-remote") {
		t.Fatalf("project get other: want its server refused, saying how the operator allows it:\n%s", out)
	}
	_, stderr, err := tryRun("project", "call", "other", "issues.lookup", `{"id":"1"}`, "--nats-url", rig.node.URL)
	if err == nil {
		t.Fatalf("project call of a refused server's tool succeeded: %s", stderr)
	}
	if paths2, _ := seen.seen(); slices.Contains(paths2, "/other") || len(paths2) < len(paths) {
		t.Fatalf("the server was asked for %q, want no request for the URL not allowed", paths2)
	}
	if logs := rig.node.Logs(); strings.Contains(logs, token) {
		t.Fatalf("serve's log holds the token:\n%s", logs)
	}
}

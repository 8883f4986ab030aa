package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// httpBase returns http://HOST:PORT of the node's gateways listener, as
// its log announced it (it was started with --http 127.0.0.1:0).
func httpBase(t *testing.T, node *Node) string {
	t.Helper()
	for line := range strings.SplitSeq(node.Logs(), "\n") {
		var rec struct {
			Msg string `json:"msg"`
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "http" && rec.URL != "" {
			return rec.URL
		}
	}
	t.Fatalf("the node logged no http URL:\n%s", node.Logs())
	return ""
}

type httpAnswer struct {
	code   int
	header http.Header
	body   string
}

func httpDo(t *testing.T, method, url, body string, header map[string]string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return httpAnswer{resp.StatusCode, resp.Header, string(raw)}
}

// TestHTTPFrontDoorThroughTheBinary: `serve --http 127.0.0.1:0
// --http-token-env VAR` is reachable at the URL it logs and ping reports,
// answers /healthz without a token and refuses, with a JSON error, what
// an attacker would try.
func TestHTTPFrontDoorThroughTheBinary(t *testing.T) {
	const token = "e2e-http-token-5f1c9a"
	t.Setenv("JIDO_E2E_HTTP_TOKEN", token)
	node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0", "--http-token-env", "JIDO_E2E_HTTP_TOKEN",
		"--http-allow-origin", "http://localhost:6274", "--http-max-body-bytes", "1024")
	base := httpBase(t, node)
	if ping := reply(t, node.NATS(t, "req", "--raw", "jido.api.ping", "")); ping["http"] != base {
		t.Errorf("ping's http = %v, want %s", ping["http"], base)
	}
	if strings.Contains(node.Logs(), token) {
		t.Errorf("the token is in the node's log")
	}
	auth := "Bearer " + token
	if a := httpDo(t, "GET", base+"/healthz", "", nil); a.code != 200 || !strings.Contains(a.body, `"status":"ok"`) {
		t.Fatalf("/healthz: %d %s", a.code, a.body)
	}
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		typ                      string
	}{
		{"no token", "POST", "/mcp", "{}", nil, 401, "unauthorized"},
		{"wrong token", "POST", "/mcp", "{}", map[string]string{"Authorization": "Bearer nope"}, 401, "unauthorized"},
		{"token in the query", "POST", "/mcp?access_token=" + token, "{}", nil, 400, "invalid_request"},
		{"foreign origin", "POST", "/mcp", "{}", map[string]string{"Authorization": auth, "Origin": "http://evil.example"}, 403, "forbidden"},
		{"rebound host", "GET", "/mcp", "", map[string]string{"Authorization": auth, "Host": "evil.example"}, 403, "forbidden"},
		{"dot-dot", "POST", "/mcp/p1/%2e%2e/p2", "{}", map[string]string{"Authorization": auth}, 400, "invalid_request"},
		{"oversized body", "POST", "/mcp", strings.Repeat("x", 1025), map[string]string{"Authorization": auth}, 413, "too_large"},
		{"long header", "GET", "/mcp", "", map[string]string{"Authorization": auth, "X-Long": strings.Repeat("a", 128<<10)}, 431, ""},
		{"nothing there", "GET", "/nothing", "", map[string]string{"Authorization": auth}, 404, "not_found"},
	}
	for _, c := range cases {
		a := httpDo(t, c.method, base+c.path, c.body, c.header)
		var r struct {
			Error struct{ Type, Message string }
		}
		_ = json.Unmarshal([]byte(a.body), &r)
		if a.code != c.code || r.Error.Type != c.typ || (c.typ != "" && r.Error.Message == "") {
			t.Errorf("%s: %d %s, want %d %s", c.name, a.code, a.body, c.code, c.typ)
		}
		if c.code == 401 && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without WWW-Authenticate", c.name)
		}
	}
	// Still up after all that.
	if a := httpDo(t, "GET", base+"/healthz", "", nil); a.code != 200 {
		t.Fatalf("/healthz after the refusals: %d %s", a.code, a.body)
	}
	if err := node.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestHTTPRefusedAtStart: serve exits 1 with what to do on a
// non-loopback --http without a token, and on a --http-token-env whose
// variable is unset.
func TestHTTPRefusedAtStart(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "--http-token-env"},
		{[]string{"--http", "127.0.0.1:0", "--http-token-env", "JIDO_E2E_SURELY_UNSET"}, "JIDO_E2E_SURELY_UNSET is not set"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		args := append([]string{"serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0"}, c.args...)
		out, err := exec.CommandContext(ctx, tools.JidoBus, args...).CombinedOutput()
		cancel()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v\n%s\nwant exit 1 saying %q", c.args, err, out, c.want)
		}
	}
}

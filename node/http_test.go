package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/frontdoor"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func startHTTPNode(t *testing.T, h HTTPConfig) *Node {
	t.Helper()
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{DontListen: true}, NoSync: true, HTTP: h})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func httpGet(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
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
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestHTTPListener: Config.HTTP starts the front door on its address, the
// URL is reported by HTTPURL and ping, /healthz answers without a token,
// the rest wants it, and Close stops the listener.
func TestHTTPListener(t *testing.T) {
	n := startHTTPNode(t, HTTPConfig{Listen: "127.0.0.1:0", Options: frontdoor.Options{Tokens: map[string]string{"tok-0123456789": "ci"}}})
	url := n.HTTPURL()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		_ = n.Shutdown(context.Background())
		t.Fatalf("HTTPURL() = %q, want http://127.0.0.1:PORT", url)
	}
	if code, body := httpGet(t, url+"/healthz", nil); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := httpGet(t, url+"/mcp", nil); code != 401 {
		t.Errorf("/mcp without a token: %d %s, want 401", code, body)
	}
	// Past the token, the gateways answer (the MCP SDK refuses a GET
	// that does not accept an event stream); another path is not found.
	auth := map[string]string{"Authorization": "Bearer tok-0123456789"}
	if code, body := httpGet(t, url+"/mcp", auth); code != 400 || !strings.Contains(body, "text/event-stream") {
		t.Errorf("/mcp with the token: %d %s, want the MCP gateway's 400", code, body)
	}
	if code, body := httpGet(t, url+"/a2a/nosuch/.well-known/agent-card.json", auth); code != 404 || !strings.Contains(body, "not_found") {
		t.Errorf("the card of a project not open: %d %s, want the A2A gateway's 404", code, body)
	}
	if code, body := httpGet(t, url+"/nothing", auth); code != 404 {
		t.Errorf("/nothing with the token: %d %s, want 404", code, body)
	}
	reply, err := n.ping(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(reply)
	if !strings.Contains(string(raw), `"http":"`+url+`"`) {
		t.Errorf("ping = %s, want \"http\":%q", raw, url)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Fatalf("the listener still answers after Close")
	}
}

// TestHTTPLoopbackHosts: on a loopback listener a Host of another name is
// refused (DNS rebinding), loopback names are not.
func TestHTTPLoopbackHosts(t *testing.T) {
	n := startHTTPNode(t, HTTPConfig{Listen: "127.0.0.1:0"})
	defer n.Shutdown(context.Background())
	defer http.DefaultClient.CloseIdleConnections()
	for host, want := range map[string]int{"evil.example:80": 403, "localhost:1234": 200, "127.0.0.1": 200, "[::1]:9": 200} {
		if code, body := httpGet(t, n.HTTPURL()+"/healthz", map[string]string{"Host": host}); code != want {
			t.Errorf("Host %s: %d %s, want %d", host, code, body, want)
		}
	}
}

// TestHTTPProtectedMode: a non-loopback listener without a token is
// refused at start with what to do, as the embedded NATS server's is;
// with a token it starts. A bad option is an error at start too.
func TestHTTPProtectedMode(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{DontListen: true}, NoSync: true, HTTP: HTTPConfig{Listen: listen}})
		if err == nil {
			_ = n.Shutdown(context.Background())
			t.Fatalf("HTTP on %s without a token started", listen)
		}
		if !errors.Is(err, ErrUnprotected) || !strings.Contains(err.Error(), "--http-token-env") {
			t.Fatalf("HTTP on %s: %v, want protected mode naming --http-token-env", listen, err)
		}
	}
	n := startHTTPNode(t, HTTPConfig{Listen: "0.0.0.0:0", Options: frontdoor.Options{Tokens: map[string]string{"tok-0123456789": "ci"}}})
	_ = n.Shutdown(context.Background())

	for _, h := range []HTTPConfig{
		{Listen: "127.0.0.1:0", Options: frontdoor.Options{AllowOrigins: []string{"null"}}},
		{Listen: "nonsense"},
	} {
		n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{DontListen: true}, NoSync: true, HTTP: h})
		if err == nil {
			_ = n.Shutdown(context.Background())
			t.Fatalf("%+v started", h)
		}
	}
}

// TestHTTPRefusalsAreDeadLetters: a request the front door refuses is a
// dead letter like any refused input, with its reason and where it came
// from, and without the token it carried.
func TestHTTPRefusalsAreDeadLetters(t *testing.T) {
	n := startHTTPNode(t, HTTPConfig{Listen: "127.0.0.1:0", Options: frontdoor.Options{Tokens: map[string]string{"tok-0123456789": "ci"}}})
	defer n.Shutdown(context.Background())
	if code, _ := httpGet(t, n.HTTPURL()+"/mcp/p1", map[string]string{"Authorization": "Bearer wrong-secret-token"}); code != 401 {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
	// Past the door, a gateway's refusal of a project that is not open
	// reaches no project stream: it is a dead letter too.
	if code, _ := httpGet(t, n.HTTPURL()+"/a2a/nosuch/.well-known/agent-card.json", map[string]string{"Authorization": "Bearer tok-0123456789"}); code != 404 {
		t.Fatalf("the card of a project not open: %d, want 404", code)
	}
	var found []string
	testkit.EventuallyNil(t, "two dead letters", func() error {
		found = found[:0]
		for e, err := range n.Log().ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
			if errors.Is(err, eventlog.ErrNotFound) {
				break // the dead letters are filed a moment after the answers
			}
			if err != nil {
				t.Fatal(err)
			}
			found = append(found, string(e.Event.Data()))
		}
		if len(found) != 2 {
			return fmt.Errorf("dead letters %v", found)
		}
		return nil
	})
	if d := found[0]; !strings.Contains(d, `"reason":"unauthorized"`) || !strings.Contains(d, `"subject":"http GET /mcp/p1"`) || strings.Contains(d, "wrong-secret-token") {
		t.Fatalf("dead letter %s: want reason unauthorized, the request named, no token", d)
	}
	if d := found[1]; !strings.Contains(d, `"reason":"not_found"`) || !strings.Contains(d, "/a2a/nosuch/") || strings.Contains(d, "tok-0123456789") {
		t.Fatalf("dead letter %s: want reason not_found, the request named, no token", d)
	}
}

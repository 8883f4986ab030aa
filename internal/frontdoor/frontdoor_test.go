package frontdoor_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/internal/frontdoor"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo is a mount that answers with the caller the door put in the
// context and how many body bytes it read.
type echo struct{}

func (echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "mount read: "+err.Error(), http.StatusBadRequest)
		return
	}
	c := gateway.CallerOf(r.Context())
	_ = json.NewEncoder(w).Encode(map[string]any{"caller": c.Name, "admin": c.Admin, "remote": c.Remote, "read": len(body), "path": r.URL.Path, "max_mode": c.MaxMode})
}

func mounts() map[string]http.Handler {
	return map[string]http.Handler{"/mcp": echo{}, "/mcp/": echo{}, "/a2a/": echo{}}
}

// door starts an httptest server of the door with o on mounts().
func door(t *testing.T, o frontdoor.Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(frontdoor.New(o, mounts()))
	srv.Config = frontdoor.NewServer(o, srv.Config.Handler)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	code   int
	header http.Header
	body   map[string]any
	raw    string
}

func do(t *testing.T, srv *httptest.Server, method, path, body string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// errType is the refusal's error.type, "" when the body is not a refusal.
func (a answer) errType() string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["type"].(string)
	if m, _ := e["message"].(string); s != "" && m == "" {
		return s + " (no message)"
	}
	return s
}

var tokens = frontdoor.Options{
	Tokens: map[string]string{"s3cret-global-token": "ci"},
	ProjectTokens: map[string]map[string]string{
		"p1": {"p1-only-token-xyz": "p1-bot"},
	},
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// TestRefusals: each request the door refuses, with the status, the
// machine word and (on 401) WWW-Authenticate; the mount never runs.
func TestRefusals(t *testing.T) {
	srv := door(t, frontdoor.Options{
		Tokens:        tokens.Tokens,
		ProjectTokens: tokens.ProjectTokens,
		AllowOrigins:  []string{"http://localhost:6274"},
		AllowHosts:    []string{"localhost", "127.0.0.1"},
		MaxBodyBytes:  64,
	})
	good := "s3cret-global-token"
	withOrigin := func(o string) map[string]string {
		h := bearer(good)
		h["Origin"] = o
		return h
	}
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		typ                      string
	}{
		{"no token", "POST", "/mcp", "{}", nil, 401, "unauthorized"},
		{"wrong token", "POST", "/mcp", "{}", bearer("s3cret-global-tokem"), 401, "unauthorized"},
		{"not bearer", "POST", "/mcp", "{}", map[string]string{"Authorization": "Basic " + good}, 401, "unauthorized"},
		{"token in the query", "POST", "/mcp?access_token=" + good, "{}", nil, 400, "invalid_request"},
		{"project token on all projects", "POST", "/mcp", "{}", bearer("p1-only-token-xyz"), 403, "forbidden"},
		{"project token on another project", "POST", "/mcp/p2", "{}", bearer("p1-only-token-xyz"), 403, "forbidden"},
		{"project token on another project's a2a", "POST", "/a2a/p2", "{}", bearer("p1-only-token-xyz"), 403, "forbidden"},
		{"project token through ..", "POST", "/mcp/p1/../p2", "{}", bearer("p1-only-token-xyz"), 400, "invalid_request"},
		{"project token through %2e%2e", "POST", "/mcp/p1/%2e%2e/p2", "{}", bearer("p1-only-token-xyz"), 400, "invalid_request"},
		{"encoded slash", "POST", "/a2a/p1%2Fx", "{}", bearer("p1-only-token-xyz"), 400, "invalid_request"},
		{"foreign origin", "POST", "/mcp", "{}", withOrigin("http://evil.example"), 403, "forbidden"},
		{"null origin", "POST", "/mcp", "{}", withOrigin("null"), 403, "forbidden"},
		{"origin differs by port", "POST", "/mcp", "{}", withOrigin("http://localhost:6275"), 403, "forbidden"},
		{"foreign host (DNS rebinding)", "GET", "/mcp", "", map[string]string{"Authorization": "Bearer " + good, "Host": "evil.example:80"}, 403, "forbidden"},
		{"oversized body", "POST", "/mcp", strings.Repeat("x", 65), bearer(good), 413, "too_large"},
		{"unknown path", "GET", "/nothing", "", bearer(good), 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := do(t, srv, c.method, c.path, c.body, c.header)
			if a.code != c.code || a.errType() != c.typ {
				t.Fatalf("%s %s: %d %s, want %d with error type %s", c.method, c.path, a.code, a.raw, c.code, c.typ)
			}
			if _, ran := a.body["caller"]; ran {
				t.Fatalf("the mount ran: %s", a.raw)
			}
			if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if c.code == 401 && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer …: %v", a.header)
			}
		})
	}
}

// TestAdmitted: what the door lets through, with the caller it names.
func TestAdmitted(t *testing.T) {
	srv := door(t, frontdoor.Options{
		Tokens:        tokens.Tokens,
		ProjectTokens: tokens.ProjectTokens,
		AllowOrigins:  []string{"http://localhost:6274"},
		AllowHosts:    []string{"localhost", "127.0.0.1"},
		MaxBodyBytes:  64,
	})
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		caller                   string
	}{
		{"global token", "POST", "/mcp", "{}", bearer("s3cret-global-token"), "ci"},
		{"global token on a project", "POST", "/a2a/p2/.well-known/agent-card.json", "", bearer("s3cret-global-token"), "ci"},
		{"project token on its mcp", "POST", "/mcp/p1", "{}", bearer("p1-only-token-xyz"), "p1-bot"},
		{"project token on its a2a", "POST", "/a2a/p1", "{}", bearer("p1-only-token-xyz"), "p1-bot"},
		{"project token on its card", "GET", "/a2a/p1/.well-known/agent-card.json", "", bearer("p1-only-token-xyz"), "p1-bot"},
		{"allowed origin", "POST", "/mcp", "{}", map[string]string{"Authorization": "Bearer s3cret-global-token", "Origin": "http://localhost:6274"}, "ci"},
		{"scheme is case-insensitive", "POST", "/mcp", "{}", map[string]string{"Authorization": "bearer s3cret-global-token"}, "ci"},
		{"body at the limit", "POST", "/mcp", strings.Repeat("x", 64), bearer("s3cret-global-token"), "ci"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := do(t, srv, c.method, c.path, c.body, c.header)
			if a.code != 200 || a.body["caller"] != c.caller {
				t.Fatalf("%s %s: %d %s, want 200 from the mount with caller %s", c.method, c.path, a.code, a.raw, c.caller)
			}
			if r, _ := a.body["remote"].(string); !strings.HasPrefix(r, "127.0.0.1:") {
				t.Errorf("caller's remote %q, want 127.0.0.1:port", r)
			}
			if got, want := a.body["read"], float64(len(c.body)); got != want {
				t.Errorf("the mount read %v bytes, want %v", got, want)
			}
		})
	}
}

// TestAnonymous: with no token configured every request is admitted as
// "anonymous" (the node allows that on loopback only).
func TestAnonymous(t *testing.T) {
	srv := door(t, frontdoor.Options{})
	a := do(t, srv, "POST", "/mcp/p1", "{}", nil)
	if a.code != 200 || a.body["caller"] != "anonymous" {
		t.Fatalf("%d %s, want 200 as anonymous", a.code, a.raw)
	}
	// The default body limit is 1 MiB.
	a = do(t, srv, "POST", "/mcp", strings.Repeat("x", 1<<20+1), nil)
	if a.code != 413 {
		t.Fatalf("1 MiB + 1 with the default limit: %d %s, want 413", a.code, a.raw)
	}
}

// TestHealthz: /healthz answers without a token (as nats-server's
// monitoring /healthz does) and says no more than its status.
func TestHealthz(t *testing.T) {
	srv := door(t, tokens)
	a := do(t, srv, "GET", "/healthz", "", nil)
	if a.code != 200 || a.body["status"] != "ok" {
		t.Fatalf("/healthz: %d %s, want 200 {\"status\":\"ok\"}", a.code, a.raw)
	}
	sick := door(t, frontdoor.Options{Tokens: tokens.Tokens, Healthy: func() error { return fmt.Errorf("disk full at /secret/path") }})
	a = do(t, sick, "GET", "/healthz", "", nil)
	if a.code != 503 || a.body["status"] != "unavailable" || strings.Contains(a.raw, "/secret/path") {
		t.Fatalf("/healthz of a sick node: %d %s, want 503 unavailable, no detail", a.code, a.raw)
	}
}

// TestChunkedOversizedBody: a body without Content-Length is refused 413
// once past the limit, before the mount sees any of it.
func TestChunkedOversizedBody(t *testing.T) {
	srv := door(t, frontdoor.Options{MaxBodyBytes: 10})
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", io.MultiReader(strings.NewReader(strings.Repeat("y", 11))))
	req.ContentLength = -1
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || strings.Contains(string(raw), "caller") {
		t.Fatalf("chunked 11 bytes over a limit of 10: %d %s, want 413 and the mount never run", resp.StatusCode, raw)
	}
}

// TestSlowClient: a client that sends its headers and part of its body,
// or its headers and then nothing, then stalls, gets 408 once the read
// timeout passes; the door stays up.
func TestSlowClient(t *testing.T) {
	srv := door(t, frontdoor.Options{ReadTimeout: 100 * time.Millisecond})
	for _, sent := range []string{"0123456789", ""} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n%s", sent)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to a stalled body (%q sent): %v", sent, err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("stalled body (%q sent): %d, want 408", sent, resp.StatusCode)
		}
	}
	if a := do(t, srv, "POST", "/mcp", "{}", nil); a.code != 200 {
		t.Fatalf("after a slow client: %d %s", a.code, a.raw)
	}
}

// slowBody sends a request of tok whose body never ends (the connection
// closes when the test ends), and sends its answer's status to codes (0
// when the connection ends without one).
func slowBody(t *testing.T, srv *httptest.Server, path, tok string, codes chan<- int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"", path, tok)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			codes <- 0
			return
		}
		resp.Body.Close()
		codes <- resp.StatusCode
	}()
	return conn
}

// TestCallerShare: one caller's slow bodies take MaxPerCaller slots and
// no more — the others are refused 503 at once, their bodies left unread
// — so another caller is served; once they end, the caller's slots are
// free again.
func TestCallerShare(t *testing.T) {
	o := frontdoor.Options{
		ProjectTokens: map[string]map[string]string{"p1": {"p1-token-0123": "p1-bot"}, "p2": {"p2-token-4567": "p2-bot"}},
		MaxPerCaller:  3, MaxConcurrent: 5, ReadTimeout: time.Minute,
	}
	srv := door(t, o)
	const sent = 8
	codes := make(chan int, sent)
	var conns []net.Conn
	for range sent {
		conns = append(conns, slowBody(t, srv, "/a2a/p1", "p1-token-0123", codes))
	}
	refusal := func() {
		t.Helper()
		if code := <-codes; code != http.StatusServiceUnavailable {
			t.Fatalf("a slow body past p1-bot's share: %d, want 503", code)
		}
	}
	// sent-MaxConcurrent refusals: the door has seen every request, had
	// it one pool for all callers.
	for range sent - o.MaxConcurrent {
		refusal()
	}
	if a := do(t, srv, "POST", "/a2a/p2", "{}", bearer("p2-token-4567")); a.code != 200 || a.body["caller"] != "p2-bot" {
		t.Fatalf("p2-bot while p1-bot's slow bodies are in flight: %d %s, want served", a.code, a.raw)
	}
	for range o.MaxConcurrent - o.MaxPerCaller {
		refusal()
	}
	for _, c := range conns {
		c.Close()
	}
	// The door hears of the closed connections as it reads their bodies.
	testkit.EventuallyNil(t, "p1-bot served once its slow bodies are gone", func() error {
		a := do(t, srv, "POST", "/a2a/p1", "{}", bearer("p1-token-0123"))
		switch a.code {
		case 200:
			return nil
		case http.StatusServiceUnavailable:
			return fmt.Errorf("%d %s", a.code, a.raw)
		}
		t.Fatalf("p1-bot once its slow bodies are gone: %d %s, want served", a.code, a.raw)
		return nil
	})
}

// TestRefusalOfAnUnreadBody: a request refused before its body is read
// (here: no token) whose body never comes is answered at once, and its
// connection closed; net/http used to wait for the body, without end,
// before it sent the answer.
func TestRefusalOfAnUnreadBody(t *testing.T) {
	srv := door(t, tokens)
	codes := make(chan int, 1)
	slowBody(t, srv, "/a2a/p1", "not-a-token", codes)
	if code := <-codes; code != http.StatusUnauthorized {
		t.Fatalf("a request with a wrong token and a body that never comes: %d, want 401 at once", code)
	}
}

// TestLongHeader: a header past the server's limit is refused (431) by
// net/http before the door runs.
func TestLongHeader(t *testing.T) {
	srv := door(t, frontdoor.Options{})
	a := do(t, srv, "GET", "/healthz", "", map[string]string{"X-Long": strings.Repeat("a", 128<<10)})
	if a.code != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("128 KiB header: %d, want 431", a.code)
	}
}

// TestConcurrencyBound: past MaxConcurrent requests in flight the door
// answers 503 with Retry-After instead of queueing.
func TestConcurrencyBound(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	block := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})
	o := frontdoor.Options{MaxConcurrent: 1}
	srv := httptest.NewServer(frontdoor.New(o, map[string]http.Handler{"/mcp": block}))
	defer srv.Close()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second request with one slot: %d %v, want 503 with Retry-After", resp.StatusCode, resp.Header)
	}
	// /healthz is not bounded: a full door still says it is alive.
	if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz on a full door: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestOptionsChecked: tokens the door cannot use are an error at start.
func TestOptionsChecked(t *testing.T) {
	for _, o := range []frontdoor.Options{
		{Tokens: map[string]string{"": "empty"}},
		{Tokens: map[string]string{"has space": "x"}},
		{Tokens: map[string]string{"tok-123456": ""}},
		{ProjectTokens: map[string]map[string]string{"a/b": {"tok-123456": "x"}}},
		{AllowOrigins: []string{"localhost:6274"}},
		{AllowOrigins: []string{"null"}},
		// A name is one token: who the caller is, and whose A2A tasks.
		{Tokens: map[string]string{"tok-123456": "bot", "tok-654321": "bot"}},
		{Tokens: map[string]string{"tok-123456": "bot"}, ProjectTokens: map[string]map[string]string{"p1": {"tok-654321": "bot"}}},
		{ProjectTokens: map[string]map[string]string{"p1": {"tok-123456": "bot"}, "p2": {"tok-123456": "other"}}},
		{Tokens: map[string]string{"tok-123456": "anonymous"}},
		// An admin names a token that admits every path.
		{Tokens: map[string]string{"tok-123456": "ops"}, Admins: []string{"nobody"}},
		{ProjectTokens: map[string]map[string]string{"p1": {"tok-123456": "p1-bot"}}, Admins: []string{"p1-bot"}},
		// A max_mode names a token, and a mode.
		{Tokens: map[string]string{"tok-123456": "bot"}, MaxModes: map[string]string{"other": "plan"}},
		{Tokens: map[string]string{"tok-123456": "bot"}, MaxModes: map[string]string{"bot": "readonly"}},
	} {
		if err := o.Check(); err == nil {
			t.Errorf("Check(%+v) = nil, want an error", o)
		}
	}
}

// TestAdmins: the caller of an admin token is an admin; another token's
// is not; where no token is configured every caller is the same one, an
// admin. One token admitted to two projects under one name is fine.
func TestAdmins(t *testing.T) {
	o := frontdoor.Options{
		Tokens:        map[string]string{"ops-token-0123": "ops", "ci-token-4567": "ci"},
		ProjectTokens: map[string]map[string]string{"p1": {"bot-token-89ab": "bot"}, "p2": {"bot-token-89ab": "bot"}},
		Admins:        []string{"ops"},
	}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	srv := door(t, o)
	for tok, want := range map[string]bool{"ops-token-0123": true, "ci-token-4567": false, "bot-token-89ab": false} {
		a := do(t, srv, "POST", "/a2a/p2", "{}", bearer(tok))
		if a.code != 200 || a.body["admin"] != want {
			t.Errorf("token %s: %d %s, want admin %v", tok, a.code, a.raw, want)
		}
	}
	// A token's max_mode goes with its caller (gateway.Caller.MaxMode).
	o.MaxModes = map[string]string{"bot": "plan"}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	bounded := door(t, o)
	for tok, want := range map[string]string{"bot-token-89ab": "plan", "ci-token-4567": ""} {
		if a := do(t, bounded, "POST", "/a2a/p1", "{}", bearer(tok)); a.code != 200 || a.body["max_mode"] != want {
			t.Errorf("token %s: %d %s, want max_mode %q", tok, a.code, a.raw, want)
		}
	}
	open := door(t, frontdoor.Options{})
	if a := do(t, open, "POST", "/mcp", "{}", nil); a.body["caller"] != "anonymous" || a.body["admin"] != true {
		t.Errorf("no token configured: %s, want anonymous, an admin", a.raw)
	}
}

// TestPublic: a request of Options.Public (an A2A card) is admitted
// without a token and reaches its mount with no caller; one that carries
// a token is checked as any other (a wrong one 401, another project's
// 403); every other request, the same path by POST included, still needs
// a token, and the checks before the token's apply to all. Requests
// admitted without a token share one caller's share of MaxPerCaller.
func TestPublic(t *testing.T) {
	o := frontdoor.Options{
		Tokens:        tokens.Tokens,
		ProjectTokens: tokens.ProjectTokens,
		AllowHosts:    []string{"localhost", "127.0.0.1"},
		Public:        []string{"GET /a2a/{project}/.well-known/agent-card.json"},
	}
	srv := door(t, o)
	const card = "/a2a/p1/.well-known/agent-card.json"
	for _, c := range []struct {
		name, method, path string
		header             map[string]string
		code               int
		caller             string
	}{
		{"the card without a token", "GET", card, nil, 200, "unknown"},
		{"another project's card without a token", "GET", "/a2a/p2/.well-known/agent-card.json", nil, 200, "unknown"},
		{"the card with a token", "GET", card, bearer("s3cret-global-token"), 200, "ci"},
		{"the card with a wrong token", "GET", card, bearer("wrong-token"), 401, ""},
		{"another project's card with a project's token", "GET", "/a2a/p2/.well-known/agent-card.json", bearer("p1-only-token-xyz"), 403, ""},
		{"the card's path by POST", "POST", card, nil, 401, ""},
		{"the agent without a token", "POST", "/a2a/p1", nil, 401, ""},
		{"the agent by GET without a token", "GET", "/a2a/p1/", nil, 401, ""},
		{"a path beside the card", "GET", "/a2a/p1/.well-known/other.json", nil, 401, ""},
		{"the card from a foreign host", "GET", card, map[string]string{"Host": "evil.example"}, 403, ""},
		{"the card through ..", "GET", "/a2a/p1/x/../.well-known/agent-card.json", nil, 400, ""},
		{"the card with a token in the query", "GET", card + "?access_token=s3cret-global-token", nil, 400, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := do(t, srv, c.method, c.path, "", c.header)
			if a.code != c.code || c.code == 200 && a.body["caller"] != c.caller {
				t.Fatalf("%s %s: %d %s, want %d (caller %q)", c.method, c.path, a.code, a.raw, c.code, c.caller)
			}
		})
	}

	// One share for all requests without a token: the second waits past
	// MaxPerCaller 1 and is refused, while a token is served.
	entered, release := make(chan struct{}), make(chan struct{})
	o.MaxPerCaller = 1
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, known := gateway.CallerFrom(r.Context()); !known {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusOK)
	})
	held := httptest.NewServer(frontdoor.New(o, map[string]http.Handler{"/a2a/": blocking}))
	defer held.Close()
	first := make(chan int, 1)
	go func() {
		resp, err := http.Get(held.URL + card)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-entered
	if a := do(t, held, "GET", card, "", nil); a.code != http.StatusServiceUnavailable {
		t.Errorf("a second card request without a token while the first is in flight: %d %s, want 503", a.code, a.raw)
	}
	if a := do(t, held, "GET", card, "", bearer("s3cret-global-token")); a.code != http.StatusOK {
		t.Errorf("a card request with a token meanwhile: %d %s, want served", a.code, a.raw)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first card request: %d", code)
	}
}

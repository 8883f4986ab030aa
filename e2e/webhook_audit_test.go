package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// pathRecorder is an HTTP server on 127.0.0.1 that records the paths it
// is asked for and answers with answer.
type pathRecorder struct {
	srv *httptest.Server

	mu    sync.Mutex
	paths []string
}

func newPathRecorder(t *testing.T, answer http.HandlerFunc) *pathRecorder {
	t.Helper()
	p := &pathRecorder{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.RequestURI())
		p.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pathRecorder) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...)
}

// TestWebhookAuditRefusals: what an attacker who may start agents tries
// against a node whose operator allows one path of one receiver (on
// loopback, allowed too): each try is answered forbidden, saying why, is
// dead-lettered, keeps nothing, and echoes no value of the environment and
// no credential the caller wrote into the URL.
func TestWebhookAuditRefusals(t *testing.T) {
	t.Setenv("JIDO_SECRET_AUDIT", "audit-s3cret-value")
	t.Setenv("AUDIT_OTHER_SECRET", "other-s3cret-value")
	rcv := newPathRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	base := rcv.srv.URL // http://127.0.0.1:PORT
	node := StartNode(t, tools, t.TempDir(), "--webhook-allow", base+"/in", "--webhook-allow-private", "127.0.0.0/8")

	nc, err := nats.Connect(node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	dlq, err := nc.SubscribeSync("jido.dlq.forbidden")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	const token = "tok3n-in-the-url"
	host := strings.TrimPrefix(base, "http://")
	hook := func(url, extra string) string {
		return `{"kind":"webhook","url":"` + url + `","secret_env":"JIDO_SECRET_AUDIT"` + extra + `}`
	}
	cases := []struct {
		name, dispatch, want string
	}{
		// Path tricks: a receiver may read these as a path outside /in.
		{"sibling path", hook(base+"/inx", ""), "does not match"},
		{"dot segment", hook(base+"/in/../admin", ""), "dot segment"},
		{"encoded dot segment", hook(base+"/in/%2e%2e/admin", ""), "dot segment"},
		{"encoded slash", hook(base+"/in%2f..%2fadmin", ""), "encoded"},
		{"dot segment with a path parameter", hook(base+"/in/..;/admin", ""), "dot segment"},
		{"encoded dot segment with a path parameter", hook(base+"/in/%2e%2e%3b/admin", ""), "dot segment"},
		{"double-encoded dot segment", hook(base+"/in/%252e%252e/admin", ""), "encoded twice"},
		// Host tricks.
		{"host as user info", hook(base+"@evil.example.net/in", ""), "user info"},
		{"token as user info", hook("http://"+token+"@"+host+"/in", ""), "user info"},
		{"trailing dot", hook(strings.Replace(base, "127.0.0.1", "127.0.0.1.", 1)+"/in", ""), "trailing dot"},
		{"short IPv4", hook("http://127.1/in", ""), "dotted-decimal"},
		{"octal IPv4", hook("http://0177.0.0.1/in", ""), "dotted-decimal"},
		{"unspecified", hook("http://0.0.0.0/in", ""), "unspecified"},
		{"unspecified IPv6", hook("http://[::]/in", ""), "unspecified"},
		{"metadata service", hook("http://169.254.169.254/in", ""), "link-local"},
		{"NAT64 of loopback", hook("http://[64:ff9b::7f00:1]/in", ""), "NAT64"},
		{"unique local", hook("http://[fd00::1]/in", ""), "private"},
		{"shared address space", hook("http://100.64.0.1/in", ""), "shared address space"},
		// Headers the caller may not choose, in any spelling.
		{"authorization", hook(base+"/in", `,"headers":{"aUtHoRiZaTiOn":"Bearer x"}`), "may not be set"},
		{"cookie", hook(base+"/in", `,"headers":{"COOKIE":"a=b"}`), "may not be set"},
		{"host header", hook(base+"/in", `,"headers":{"Host":"evil.example.net"}`), "may not be set"},
		{"transfer-encoding", hook(base+"/in", `,"headers":{"Transfer-Encoding":"chunked"}`), "hop-by-hop"},
		{"connection", hook(base+"/in", `,"headers":{"Connection":"X-Api-Key"}`), "hop-by-hop"},
		{"proxy-authorization", hook(base+"/in", `,"headers":{"Proxy-Authorization":"x"}`), "proxy"},
		// Secrets.
		{"inline secret", `{"kind":"webhook","url":"` + base + `/in","secret":"inline-s3cret"}`, "inline secret"},
		{"secret_env outside the prefix", `{"kind":"webhook","url":"` + base + `/in","secret_env":"AUDIT_OTHER_SECRET"}`, "JIDO_SECRET_"},
		{"secret_env the bare prefix", `{"kind":"webhook","url":"` + base + `/in","secret_env":"JIDO_SECRET_"}`, "JIDO_SECRET_"},
		{"secret_env lower case", `{"kind":"webhook","url":"` + base + `/in","secret_env":"jido_secret_audit"}`, "JIDO_SECRET_"},
		{"secret_env not a variable name", `{"kind":"webhook","url":"` + base + `/in","secret_env":"JIDO_SECRET_../AUDIT"}`, "letters, digits and underscores"},
		{"secret_env with an equals sign", `{"kind":"webhook","url":"` + base + `/in","secret_env":"JIDO_SECRET_AUDIT=x"}`, "letters, digits and underscores"},
		// Inside a list of targets.
		{"in a list", `[{"kind":"log"},` + hook("https://evil.example.net/in", "") + `]`, "[1].url"},
	}
	for i, c := range cases {
		id := fmt.Sprintf("refused-%d", i)
		req := `{"type":"counter","id":"` + id + `","options":{"default_dispatch":` + c.dispatch + `}}`
		r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", req))
		msg := errorMessage(r)
		if errorType(r) != "forbidden" || !strings.Contains(msg, c.want) {
			t.Errorf("%s: start = %v, want forbidden containing %q", c.name, r, c.want)
		}
		for _, v := range []string{"audit-s3cret-value", "other-s3cret-value", token} {
			if strings.Contains(msg, v) {
				t.Errorf("%s: the refusal shows %q: %s", c.name, v, msg)
			}
		}
		if _, err := dlq.NextMsg(10 * time.Second); err != nil {
			t.Errorf("%s: no dead letter: %v", c.name, err)
		}
		if st := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.state", `{"id":"`+id+`"}`)); errorType(st) != "not_found" {
			t.Errorf("%s: the refused agent exists: %v", c.name, st)
		}
	}
	if n := len(rcv.got()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}

	// What the operator reads: the node's log and the dead-letter stream.
	dead := tools.Run(t, "log", "show", "dlq", "--json", "--nats-url", node.URL)
	for _, v := range []string{"audit-s3cret-value", "other-s3cret-value", token} {
		if strings.Contains(node.Logs(), v) {
			t.Errorf("the node's log shows %q", v)
		}
		if strings.Contains(dead, v) {
			t.Errorf("the dead-letter stream shows %q", v)
		}
	}
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.ping", `{}`)); r["ok"] != true {
		t.Fatalf("ping after the refusals = %v", r)
	}
}

// effectErrors are the errors of the failed directives recorded in the
// stream of agent id, read with `jido-bus log show`.
func effectErrors(t *testing.T, node *Node, id string) []string {
	t.Helper()
	var out struct {
		Entries []struct {
			Event struct {
				Type string `json:"type"`
				Data struct {
					Results []struct {
						Outcome string `json:"outcome"`
						Error   string `json:"error"`
					} `json:"results"`
				} `json:"data"`
			} `json:"event"`
		} `json:"entries"`
	}
	raw := tools.Run(t, "log", "show", "agent/"+id, "--json", "--nats-url", node.URL)
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("log show agent/%s: %v\n%s", id, err, raw)
	}
	var errs []string
	for _, e := range out.Entries {
		for _, r := range e.Event.Data.Results {
			if r.Outcome == "failed" {
				errs = append(errs, r.Error)
			}
		}
	}
	return errs
}

// TestWebhookAuditDelivery: the webhook policy from the `webhooks:` part
// of --config; a proxy named in the node's environment is not used; a
// redirect is not followed; a receiver that never answers costs one
// bounded attempt. Each failed delivery is a failed directive recorded in
// the agent's stream, without the secret, and the node keeps serving.
func TestWebhookAuditDelivery(t *testing.T) {
	t.Setenv("JIDO_SECRET_AUDIT", "audit-s3cret-value")
	proxy := newPathRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	t.Setenv("HTTP_PROXY", proxy.srv.URL) // the serve child inherits them
	t.Setenv("HTTPS_PROXY", proxy.srv.URL)
	t.Setenv("NO_PROXY", "")
	hang := make(chan struct{})
	rcv := newPathRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/in/redirect":
			http.Redirect(w, r, "/in/elsewhere", http.StatusTemporaryRedirect)
		case "/in/hang":
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	defer close(hang) // before rcv's cleanup closes the server

	conf := filepath.Join(t.TempDir(), "jido.yaml")
	// hooks.example.invalid never resolves: only a proxy could deliver to
	// it (Go's clients never proxy a loopback destination, so the
	// receiver alone would not show a proxy in use).
	yaml := "webhooks:\n  allow: [" + rcv.srv.URL + "/in, http://hooks.example.invalid/in]\n  allow_private: [127.0.0.1]\n"
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	node := StartNode(t, tools, t.TempDir(), "--config", conf)

	start := func(id, url, extra string) {
		t.Helper()
		req := `{"type":"counter","id":"` + id + `","options":{"default_dispatch":{"kind":"webhook","url":"` + url + `","secret_env":"JIDO_SECRET_AUDIT"` + extra + `}}}`
		if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", req)); r["ok"] != true {
			t.Fatalf("start %s = %v", id, r)
		}
		node.NATS(t, "req", "--raw", "jido.agent."+id+".counter.increment", `{"by":1}`)
	}
	start("ok", rcv.srv.URL+"/in/ok", "")
	start("redirect", rcv.srv.URL+"/in/redirect", "")
	start("hang", rcv.srv.URL+"/in/hang", `,"timeout":"1s","max_attempts":1`)
	start("proxied", "http://hooks.example.invalid/in", `,"timeout":"5s","max_attempts":1`)

	testkit.Eventually(t, "the delivery", func() bool { return slices.Contains(rcv.got(), "/in/ok") })
	testkit.Eventually(t, "the redirect's failure", func() bool { return len(effectErrors(t, node, "redirect")) > 0 })
	testkit.Eventually(t, "the hanging receiver's failure", func() bool { return len(effectErrors(t, node, "hang")) > 0 })

	if errs := effectErrors(t, node, "redirect"); !strings.Contains(errs[0], "307") || !strings.Contains(errs[0], "not retried") {
		t.Errorf("redirect: recorded %q, want a failure naming 307, not retried", errs)
	}
	if slices.Contains(rcv.got(), "/in/elsewhere") {
		t.Error("the redirect was followed")
	}
	if errs := effectErrors(t, node, "hang"); !strings.Contains(errs[0], "after 1 attempt") {
		t.Errorf("hang: recorded %q, want a failure after 1 attempt", errs)
	}
	testkit.Eventually(t, "the unresolvable name's delivery to end", func() bool {
		return len(effectErrors(t, node, "proxied")) > 0 || len(proxy.got()) > 0
	})
	if n := len(proxy.got()); n != 0 {
		t.Errorf("the proxy of the environment got %d requests", n)
	}
	if errs := effectErrors(t, node, "ok"); len(errs) != 0 {
		t.Errorf("the good delivery failed: %q", errs)
	}
	if strings.Contains(node.Logs(), "audit-s3cret-value") {
		t.Error("the node's log shows the secret")
	}
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.ping", "")); r["ok"] != true {
		t.Fatalf("ping = %v", r)
	}
}

// TestWebhookAuditConnectTimeRecorded: a name the operator allows that
// resolves to loopback, which the operator did not allow, gets no request,
// and the refused delivery is a failed directive recorded in the agent's
// stream — tried once, naming the address and the flag that would allow
// it, without the secret.
func TestWebhookAuditConnectTimeRecorded(t *testing.T) {
	t.Setenv("JIDO_SECRET_AUDIT", "audit-s3cret-value")
	rcv := newPathRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	named := strings.Replace(rcv.srv.URL, "127.0.0.1", "localhost", 1)
	node := StartNode(t, tools, t.TempDir(), "--webhook-allow", named+"/in")
	req := `{"type":"counter","id":"c1","options":{"default_dispatch":{"kind":"webhook","url":"` + named + `/in","secret_env":"JIDO_SECRET_AUDIT","max_attempts":3}}}`
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", req)); r["ok"] != true {
		t.Fatalf("start = %v", r)
	}
	node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":1}`)
	testkit.Eventually(t, "the recorded failure", func() bool { return len(effectErrors(t, node, "c1")) > 0 })
	got := effectErrors(t, node, "c1")[0]
	for _, want := range []string{"loopback", "--webhook-allow-private", "after 1 attempt"} {
		if !strings.Contains(got, want) {
			t.Errorf("recorded %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "audit-s3cret-value") || strings.Contains(node.Logs(), "audit-s3cret-value") {
		t.Error("the failure shows the secret")
	}
	if n := len(rcv.got()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`)); r["ok"] != true {
		t.Fatalf("state after the refused delivery = %v", r)
	}
}

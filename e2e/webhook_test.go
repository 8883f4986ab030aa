package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// hookReceiver is a webhook endpoint on 127.0.0.1 that keeps what it gets.
type hookReceiver struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []hookRequest
}

type hookRequest struct {
	header http.Header
	body   string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.reqs = append(h.reqs, hookRequest{r.Header.Clone(), string(body)})
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.reqs...)
}

// startWithHook is an agent start request for a counter whose emits go to
// a webhook, with extra fields of the webhook target.
func startWithHook(id, url, extra string) string {
	return `{"type":"counter","id":"` + id + `","options":{"default_dispatch":{"kind":"webhook","url":"` + url + `"` + extra + `}}}`
}

// errorMessage is the message of an error reply, "" for another one.
func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

const hookSecret = "e2e-hook-s3cret-value"

// TestWebhookGuardThroughTheBinary: a node started without an allow-list
// refuses, as forbidden and with a dead letter, to start an agent whose
// options name a webhook, and never reveals the environment; the operator's
// --webhook-allow and --webhook-allow-private let the same request through,
// and the agent's signals reach the receiver, signed with the key named by
// secret_env.
func TestWebhookGuardThroughTheBinary(t *testing.T) {
	t.Setenv("JIDO_SECRET_E2E_HOOK", hookSecret) // the serve child inherits it
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-e2e-value")
	rcv := newHookReceiver(t)
	hookURL := rcv.srv.URL + "/hook"

	t.Run("no allow-list", func(t *testing.T) {
		node := StartNode(t, tools, t.TempDir())
		nc, err := nats.Connect(node.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		dlq, err := nc.SubscribeSync("jido.dlq.>")
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		req := startWithHook("c1", hookURL, `,"secret_env":"JIDO_SECRET_E2E_HOOK"`)
		r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", req))
		msg := errorMessage(r)
		if r["ok"] != false || errorType(r) != "forbidden" || !strings.Contains(msg, "--webhook-allow") {
			t.Fatalf("start = %v, want forbidden naming --webhook-allow", r)
		}
		m, err := dlq.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("no dead letter for the refused start: %v", err)
		}
		// A forbidden request's body is withheld (it may hold a secret);
		// its size says which request it was.
		if m.Subject != "jido.dlq.forbidden" || len(m.Data) != 0 || m.Header.Get("jido-dlq-withheld") != "true" || m.Header.Get("jido-dlq-size") != strconv.Itoa(len(req)) {
			t.Fatalf("dead letter %s %q %v, want jido.dlq.forbidden, the body withheld, its size %d", m.Subject, m.Data, m.Header, len(req))
		}
		if st := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`)); errorType(st) != "not_found" {
			t.Fatalf("the refused agent exists: %v", st)
		}
		if strings.Contains(node.Logs(), hookSecret) {
			t.Fatal("the node's log shows the secret")
		}
	})

	t.Run("loopback allowed by the operator", func(t *testing.T) {
		node := StartNode(t, tools, t.TempDir(), "--webhook-allow", rcv.srv.URL, "--webhook-allow-private", "127.0.0.0/8")

		// What the policy refuses even here, each forbidden and saying why.
		for _, c := range []struct{ req, want string }{
			{startWithHook("bad1", hookURL, `,"secret":"inline-s3cret"`), "secret_env with a JIDO_SECRET_"},
			{startWithHook("bad2", hookURL, `,"secret_env":"AWS_SECRET_ACCESS_KEY"`), "JIDO_SECRET_"},
			{startWithHook("bad3", hookURL, `,"secret_env":"JIDO_SECRET_E2E_HOOK","headers":{"authorization":"Bearer x"}`), "authorization"},
			{startWithHook("bad4", "http://169.254.169.254/latest", `,"secret_env":"JIDO_SECRET_E2E_HOOK"`), "link-local"},
			{startWithHook("bad5", "http://2130706433/", `,"secret_env":"JIDO_SECRET_E2E_HOOK"`), "dotted-decimal"},
			{`{"type":"counter","id":"bad7","options":{"error_policy":{"emit_signal":{"kind":"webhook","url":"https://evil.example.net/","secret_env":"JIDO_SECRET_E2E_HOOK"}}}}`, "error_policy.emit_signal"},
		} {
			r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", c.req))
			msg := errorMessage(r)
			if errorType(r) != "forbidden" || !strings.Contains(msg, c.want) {
				t.Errorf("start %s = %v, want forbidden containing %q", c.req, r, c.want)
			}
			if strings.Contains(msg, "aws-e2e-value") || strings.Contains(msg, hookSecret) {
				t.Errorf("the refusal shows a value of the environment: %s", msg)
			}
		}
		r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", startWithHook("bad6", hookURL, `,"secret_env":"JIDO_SECRET_E2E_MISSING"`)))
		if errorType(r) != "invalid_request" || !strings.Contains(errorMessage(r), "JIDO_SECRET_E2E_MISSING") {
			t.Errorf("start with an unset secret_env = %v, want invalid_request naming it", r)
		}

		r = reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", startWithHook("c1", hookURL, `,"secret_env":"JIDO_SECRET_E2E_HOOK"`)))
		if r["ok"] != true {
			t.Fatalf("start = %v", r)
		}
		node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":2}`)
		testkit.Eventually(t, "the webhook", func() bool { return len(rcv.requests()) > 0 })
		got := rcv.requests()[0]
		if got.header.Get("Ce-Type") != "counter.changed" || !strings.Contains(got.body, `"count":2`) {
			t.Fatalf("the receiver got %v %s", got.header, got.body)
		}
		if err := dispatch.VerifySignature(hookSecret, got.header.Get(dispatch.HeaderTimestamp), got.body, got.header.Get(dispatch.HeaderSignature), 0); err != nil {
			t.Fatalf("signature: %v", err)
		}
		if strings.Contains(node.Logs(), hookSecret) || strings.Contains(node.Logs(), "aws-e2e-value") {
			t.Fatal("the node's log shows a value of the environment")
		}
	})

	t.Run("allowed name that resolves to loopback", func(t *testing.T) {
		// localhost matches the allow-list and is no address literal, so
		// the start is admitted; the connection is refused when it is
		// made, and the failure is the emit directive's, in the log.
		localURL := strings.Replace(rcv.srv.URL, "127.0.0.1", "localhost", 1)
		before := len(rcv.requests())
		node := StartNode(t, tools, t.TempDir(), "--webhook-allow", localURL)
		r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", startWithHook("c1", localURL+"/hook", `,"secret_env":"JIDO_SECRET_E2E_HOOK","max_attempts":2`)))
		if r["ok"] != true {
			t.Fatalf("start = %v", r)
		}
		node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":1}`)
		testkit.Eventually(t, "the directive failure in the log", func() bool {
			return strings.Contains(node.Logs(), "directive failed") && strings.Contains(node.Logs(), "--webhook-allow-private")
		})
		if n := len(rcv.requests()); n != before {
			t.Fatalf("the receiver got %d requests", n-before)
		}
		if strings.Contains(node.Logs(), hookSecret) {
			t.Fatal("the node's log shows the secret")
		}
	})

	t.Run("allowed address but loopback not allowed", func(t *testing.T) {
		node := StartNode(t, tools, t.TempDir(), "--webhook-allow", rcv.srv.URL)
		r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", startWithHook("c1", hookURL, `,"secret_env":"JIDO_SECRET_E2E_HOOK"`)))
		msg := errorMessage(r)
		if errorType(r) != "forbidden" || !strings.Contains(msg, "loopback") || !strings.Contains(msg, "--webhook-allow-private") {
			t.Fatalf("start = %v, want forbidden: loopback, --webhook-allow-private", r)
		}
	})
}

// TestWebhookAllowFlagsRefused: a pattern or network serve cannot read
// stops it before it starts, with an error naming the value.
func TestWebhookAllowFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--webhook-allow", "hooks.example.com", `"hooks.example.com"`},
		{"--webhook-allow", "https://*.com", "wildcard"},
		{"--webhook-allow-private", "10.0.0.0/33", `"10.0.0.0/33"`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, tools.JidoBus, "serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", c.flag, c.value)
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %s %s: %v\n%s\nwant a failure naming %s", c.flag, c.value, err, out, c.want)
		}
	}
}

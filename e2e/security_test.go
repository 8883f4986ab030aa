package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// natsAs runs the NATS CLI against node as user (with the inbox prefix
// every role but admin must use) and returns its exit error and what it
// printed on both outputs: `nats req` refused by permission prints the
// violation and still exits 0, so the output is what tells.
func natsAs(t *testing.T, node *Node, user, password string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := []string{"--server", node.URL, "--timeout", "2s", "--user", user, "--password", password, "--inbox-prefix", "_INBOX_" + user}
	cmd := exec.CommandContext(ctx, tools.NATS, append(base, args...)...)
	cmd.Env = natsCLIEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func bcryptHash(t *testing.T, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// writeFile writes body to name in a new temporary directory.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	clientPW = "client-secret-1"
	adminPW  = "admin-secret-1"
)

func startSecured(t *testing.T, extra ...string) *Node {
	t.Helper()
	config := writeFile(t, "jido.yaml", `
users:
  - name: app
    password: '`+bcryptHash(t, clientPW)+`'
    role: client
  - name: boss
    password: '`+bcryptHash(t, adminPW)+`'
    role: admin
`)
	return StartNode(t, tools, t.TempDir(), append([]string{"--config", config}, extra...)...)
}

// TestClientRoleThroughNATSCLI: a client may call, cast and read state;
// it is refused log.truncate, agent.stop and creating a JetStream stream
// (the NATS CLI shows the permissions violation), the stream and the agent
// are untouched, each refusal is a dead letter naming the client; an
// admin may do all of it.
func TestClientRoleThroughNATSCLI(t *testing.T) {
	node := startSecured(t)
	admin := func(args ...string) string {
		t.Helper()
		out, err := natsAs(t, node, "boss", adminPW, args...)
		if err != nil {
			t.Fatalf("nats %v as admin: %v\n%s", args, err, out)
		}
		return out
	}
	app := func(args ...string) (string, error) { return natsAs(t, node, "app", clientPW, args...) }

	if out := admin("req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`); !strings.Contains(out, `"ok":true`) {
		t.Fatalf("admin start: %s", out)
	}
	// What a client may do.
	for _, c := range []struct{ subject, body, want string }{
		{"jido.agent.c1.counter.increment", `{"by":2}`, `"count":2`},
		{"jido.api.agent.call", `{"id":"c1","type":"counter.increment","data":{"by":3}}`, `"count":5`},
		{"jido.api.agent.cast", `{"id":"c1","type":"counter.increment","data":{"by":1}}`, `"ok":true`},
		{"jido.api.agent.state", `{"id":"c1"}`, `"id":"c1"`},
		{"jido.api.ping", ``, `"ok":true`},
	} {
		out, err := app("req", "--raw", c.subject, c.body)
		if err != nil || !strings.Contains(out, c.want) {
			t.Fatalf("client req %s: %v\n%s", c.subject, err, out)
		}
	}
	// What it may not.
	for _, subject := range []string{"jido.api.log.truncate", "jido.api.agent.stop"} {
		out, _ := app("req", "--raw", subject, `{"stream":"agent/c1","before":100,"id":"c1"}`)
		if !strings.Contains(out, `Permissions Violation for Publish to "`+subject+`"`) {
			t.Fatalf("client req %s:\n%s", subject, out)
		}
	}
	out, err := app("stream", "add", "EVIL", "--subjects", "evil.>", "--defaults")
	if err == nil || !strings.Contains(out, "Permissions Violation for Publish to") {
		t.Fatalf("client stream add: %v\n%s", err, out)
	}
	if out, err := natsAs(t, node, "boss", adminPW, "stream", "info", "EVIL"); err == nil {
		t.Fatalf("the client's stream exists:\n%s", out)
	}
	// Untouched: the stream and the agent.
	if after := admin("req", "--raw", "jido.api.log.show", `{"stream":"agent/c1","limit":1}`); !strings.Contains(after, `"seq":1,`) {
		t.Fatalf("agent/c1 was truncated: %s", after)
	}
	if out := admin("req", "--raw", "jido.api.agent.state", `{"id":"c1"}`); !strings.Contains(out, `"status":"running"`) || !strings.Contains(out, `"count":6`) {
		t.Fatalf("c1 after the refused stop: %s", out)
	}
	// The dead letters, with the client's name.
	testkit.Eventually(t, "the forbidden dead letters", func() bool {
		out, _ := natsAs(t, node, "boss", adminPW, "req", "--raw", "jido.api.log.show", `{"stream":"dlq"}`)
		return strings.Contains(out, `user app may not publish to jido.api.log.truncate`) &&
			strings.Contains(out, `user app may not publish to jido.api.agent.stop`) &&
			strings.Contains(out, `$JS.API.STREAM.CREATE.EVIL`)
	})

	// The jido-bus CLI as the client: told forbidden at once, exit 5; its
	// own inbox needs no flag. As the admin: allowed.
	env := []string{"NATS_URL=" + node.URL, "NATS_USER=app", "NATS_PASSWORD=" + clientPW}
	if r := runCLI(t, env, "agent", "state", "c1"); r.code != 0 {
		t.Fatalf("jido-bus agent state as the client: exit %d\n%s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"agent", "stop", "c1", "--yes"}, {"log", "truncate", "agent/c1", "--before", "2", "--yes"}} {
		r := runCLI(t, env, args...)
		if r.code != 5 || !strings.Contains(r.stderr, "forbidden") || !strings.Contains(r.stderr, "user app") {
			t.Fatalf("jido-bus %v as the client: exit %d, want 5 (forbidden)\n%s", args, r.code, r.stderr)
		}
	}
	adminEnv := []string{"NATS_URL=" + node.URL, "NATS_USER=boss", "NATS_PASSWORD=" + adminPW}
	if r := runCLI(t, adminEnv, "log", "truncate", "agent/c1", "--before", "2", "--dry-run"); r.code != 0 {
		t.Fatalf("jido-bus log truncate --dry-run as the admin: exit %d\n%s", r.code, r.stderr)
	}

	// An admin is not refused.
	if out := admin("req", "--raw", "jido.api.log.truncate", `{"stream":"agent/c1","before":2,"dry_run":true}`); !strings.Contains(out, `"ok":true`) {
		t.Fatalf("admin truncate: %s", out)
	}
	if out := admin("req", "--raw", "jido.api.agent.stop", `{"id":"c1"}`); !strings.Contains(out, `"ok":true`) {
		t.Fatalf("admin stop: %s", out)
	}
	admin("stream", "add", "MINE", "--subjects", "mine.>", "--defaults")
	// Without its inbox prefix a client cannot even read its replies.
	cmd := exec.Command(tools.NATS, "--server", node.URL, "--timeout", "2s", "--user", "app", "--password", clientPW, "req", "jido.api.ping", "")
	cmd.Env = natsCLIEnv()
	raw, _ := cmd.CombinedOutput()
	if !strings.Contains(string(raw), "Permissions Violation for Subscription") {
		t.Fatalf("client without --inbox-prefix:\n%s", raw)
	}
}

// TestProtectedModeThroughTheBinary: a non-loopback listen without auth
// is refused (exit 1) with what to do; --insecure starts and ping says so.
func TestProtectedModeThroughTheBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.JidoBus, "serve", "--listen", "0.0.0.0:0", "--data-dir", t.TempDir())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("serve --listen 0.0.0.0:0 without auth: %v\n%s", err, out)
	}
	for _, want := range []string{"without authentication", "--config", "JIDO_TOKEN", "--insecure"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("refusal does not say %q:\n%s", want, out)
		}
	}

	node := StartNode(t, tools, t.TempDir(), "--listen", "0.0.0.0:0", "--insecure")
	var ping map[string]any
	if err := json.Unmarshal([]byte(node.NATS(t, "req", "--raw", "jido.api.ping", "")), &ping); err != nil {
		t.Fatal(err)
	}
	if ping["insecure"] != true || !strings.Contains(ping["warning"].(string), "INSECURE") {
		t.Fatalf("ping = %v", ping)
	}
	if !strings.Contains(node.Logs(), "INSECURE") {
		t.Fatalf("no warning in the log:\n%s", node.Logs())
	}
}

// TestTLSThroughNATSCLI: with tls in the config the NATS CLI connects with
// --tlsca and fails without it.
func TestTLSThroughNATSCLI(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1", "localhost")
	config := writeFile(t, "jido.yaml", "tls:\n  cert: "+pki.ServerCert+"\n  key: "+pki.ServerKey+"\n")
	node := StartNode(t, tools, t.TempDir(), "--config", config)
	if out := node.NATS(t, "--tlsca", pki.CA, "req", "--raw", "jido.api.ping", ""); !strings.Contains(out, `"ok":true`) {
		t.Fatalf("ping over TLS: %s", out)
	}
	if out, err := node.TryNATS("req", "--raw", "jido.api.ping", ""); err == nil {
		t.Fatalf("connected without the CA: %s", out)
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The node's secrets stay in the node (issue 20, items 6–9): a command
// never gets them, a project never chooses where a key is sent, a model
// server that echoes a key does not put it in the log, and a dead letter
// keeps a credential's name, never its value.

// secretsCLI runs the jido-bus CLI with an environment holding none of the
// node's secrets (as a client's shell would), in an empty folder.
func secretsCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.JidoBus, args...)
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("jido-bus %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), 0
}

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
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

// noneOf fails the test when text holds any of secrets.
func noneOf(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the secret %q:\n%s", where, s, text)
		}
	}
}

// Item 6: an inline policy listing JIDO_PASSWORD plus printenv returned
// the admin password. A project's commands get only what the node's
// operator lets them inherit, never a secret of the node.
func TestAuditCommandsNeverGetTheNodesSecrets(t *testing.T) {
	const (
		password = "e2e-admin-password-6"
		apiKey   = "sk-e2e-openai-key-6"
		hookKey  = "e2e-webhook-secret-6"
		httpTok  = "e2e-http-token-6"
	)
	t.Setenv("JIDO_PASSWORD", password) // the serve child inherits them
	t.Setenv("OPENAI_API_KEY", apiKey)
	t.Setenv("JIDO_SECRET_E2E_HOOK", hookKey)
	t.Setenv("JIDO_HTTP_TOKEN", httpTok)
	t.Setenv("JIDO_E2E_ALLOWED", "allowed-value")
	t.Setenv("JIDO_E2E_NOT_ALLOWED", "not-allowed-value")
	secrets := []string{password, apiKey, hookKey, httpTok}

	node := StartNode(t, tools, t.TempDir())
	auth := []string{"--nats-url", node.URL, "--user", "admin", "--password", password}
	proj := t.TempDir()
	writeTree(t, proj, map[string]string{"a.txt": "hello\n"})
	policy := func(env string) string {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"policy.json": `{"commands":{"programs":["printenv"]` + env + `}}`})
		return filepath.Join(dir, "policy.json")
	}
	for _, c := range []struct{ env, want string }{
		{`,"env":["PATH","JIDO_PASSWORD"]`, "JIDO_PASSWORD, which holds one of this node's secrets"},
		{`,"env":["OPENAI_API_KEY"]`, "OPENAI_API_KEY, which holds one of this node's secrets"},
		{`,"env":["JIDO_SECRET_E2E_HOOK"]`, "JIDO_SECRET_E2E_HOOK, which holds"},
		{`,"env":["JIDO_HTTP_TOKEN"]`, "JIDO_HTTP_TOKEN, which holds"},
		{`,"env":["PATH","JIDO_E2E_NOT_ALLOWED"]`, "serve --command-env"},
	} {
		_, stderr, code := secretsCLI(t, append([]string{"project", "open", proj, "--id", "p6", "--policy", policy(c.env)}, auth...)...)
		if code != 5 || !strings.Contains(stderr, c.want) {
			t.Errorf("project open with commands.env%s: exit %d, %s\nwant exit 5 (forbidden) saying %q", c.env, code, stderr, c.want)
		}
		if code == 0 { // what the defect looked like: printenv hands the secrets out
			printed, _, _ := secretsCLI(t, append([]string{"project", "call", "p6", "run_command", `{"argv":["printenv"]}`, "-o", "json"}, auth...)...)
			noneOf(t, "printenv under commands.env"+c.env, printed, secrets...)
			secretsCLI(t, append([]string{"project", "close", "p6"}, auth...)...)
		}
	}
	// The project's own file is held to the same rule.
	writeTree(t, proj, map[string]string{".jido/policy.yaml": "commands:\n  programs: [printenv]\n  env: [PATH, JIDO_PASSWORD]\n"})
	if _, stderr, code := secretsCLI(t, append([]string{"project", "open", proj, "--id", "p6"}, auth...)...); code != 5 || !strings.Contains(stderr, "JIDO_PASSWORD") {
		t.Errorf("project open with .jido/policy.yaml listing JIDO_PASSWORD: exit %d, %s", code, stderr)
		secretsCLI(t, append([]string{"project", "close", "p6"}, auth...)...)
	}
	if err := os.Remove(filepath.Join(proj, ".jido/policy.yaml")); err != nil {
		t.Fatal(err)
	}
	noneOf(t, "serve's log", node.Logs(), secrets...)

	// The operator chooses what commands may inherit; a policy without
	// env gets all of it, and nothing else.
	node = StartNode(t, tools, t.TempDir(), "--command-env", "PATH,LANG,JIDO_E2E_ALLOWED")
	auth = []string{"--nats-url", node.URL, "--user", "admin", "--password", password}
	if _, stderr, code := secretsCLI(t, append([]string{"project", "open", proj, "--id", "p6", "--policy", policy("")}, auth...)...); code != 0 {
		t.Fatalf("project open: exit %d, %s", code, stderr)
	}
	out, stderr, code := secretsCLI(t, append([]string{"project", "call", "p6", "run_command", `{"argv":["printenv"]}`, "-o", "json"}, auth...)...)
	if code != 0 {
		t.Fatalf("run_command printenv: exit %d, %s", code, stderr)
	}
	noneOf(t, "printenv's output", out, append(secrets, "not-allowed-value")...)
	realProj, err := filepath.EvalSymlinks(proj)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PATH=", "JIDO_E2E_ALLOWED=allowed-value", "HOME=" + realProj} {
		if !strings.Contains(out, want) {
			t.Errorf("printenv's output lacks %s:\n%s", want, out)
		}
	}

	// The operator cannot allow a secret either: serve refuses to start.
	for _, bad := range []string{"PATH,JIDO_PASSWORD", "OPENAI_API_KEY", "JIDO_SECRET_E2E_HOOK", "JIDO_HTTP_TOKEN"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, tools.JidoBus, "serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--command-env", bad).CombinedOutput()
		cancel()
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "holds one of this node's secrets") {
			t.Errorf("serve --command-env %s: %v\n%s\nwant exit 1 saying it holds a secret", bad, err, out)
		}
	}
}

// modelServer is a model endpoint that records every request's headers
// and answers each with the next of statuses (the last repeats), its
// error body echoing the Authorization header it got, raw and base64.
type modelServer struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func newModelServer(t *testing.T, statuses ...int) *modelServer {
	t.Helper()
	m := &modelServer{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.headers = append(m.headers, r.Header.Clone())
		status := statuses[min(len(m.headers), len(statuses))-1]
		m.mu.Unlock()
		auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
		msg, _ := json.Marshal(fmt.Sprintf("invalid key %q (%s)", auth, base64.StdEncoding.EncodeToString([]byte(auth))))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error"}}`, msg)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *modelServer) seen() []http.Header {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]http.Header(nil), m.headers...)
}

// subscribed waits until the NATS CLI's subscription is up: it prints its
// banner once subscribed.
func subscribed(t *testing.T, out *testkit.Buffer) {
	t.Helper()
	testkit.Eventually(t, "the CLI subscription", func() bool { return strings.Contains(out.String(), "Subscribing on") })
}

// awaitLLMFailed sends text to conv and waits for count
// conversation.llm.failed events of it, published after their commit.
func awaitLLMFailed(t *testing.T, node *Node, conv, text string, count int) {
	t.Helper()
	out, wait := node.StartNATS(t, "sub", "jido.emit."+conv+".conversation.llm.failed", "--count", fmt.Sprint(count))
	subscribed(t, out)
	tools.Run(t, "conv", "send", conv, text, "--nats-url", node.URL)
	if err := wait(); err != nil {
		t.Fatalf("waiting for %d conversation.llm.failed of %s: %v\n%s", count, conv, err, out.String())
	}
}

// Item 7: a project's .jido/config.yaml sent JIDO_PASSWORD as a bearer
// token to a listener of its own (api_key_env + base_url), and a base_url
// alone got OPENAI_API_KEY. A project names one of the node's providers;
// anything else is refused naming the operator's setting.
func TestAuditProjectConfigNeverChoosesWhereAKeyGoes(t *testing.T) {
	const (
		password = "e2e-admin-password-7"
		apiKey   = "sk-e2e-openai-key-7"
	)
	t.Setenv("JIDO_PASSWORD", password)
	t.Setenv("OPENAI_API_KEY", apiKey)
	listener := newModelServer(t, 400)
	local := newModelServer(t, 400)
	node := StartNode(t, tools, t.TempDir())
	auth := []string{"--nats-url", node.URL, "--user", "admin", "--password", password}
	// The conversation helpers run the CLI with the test's environment;
	// they authenticate with NATS_USER / NATS_PASSWORD.
	t.Setenv("NATS_USER", "admin")
	t.Setenv("NATS_PASSWORD", password)

	for i, cfg := range []string{
		"llm:\n  provider: openai\n  model: x\n  api_key_env: JIDO_PASSWORD\n  base_url: " + listener.URL + "/v1\n",
		"llm:\n  provider: openai\n  model: x\n  base_url: " + listener.URL + "/v1\n",
	} {
		proj := t.TempDir()
		id := fmt.Sprintf("p7%c", 'a'+i)
		writeTree(t, proj, map[string]string{".jido/config.yaml": cfg})
		if _, stderr, code := secretsCLI(t, append([]string{"project", "open", proj, "--id", id}, auth...)...); code != 0 {
			t.Fatalf("project open: %d %s", code, stderr)
		}
		awaitLLMFailed(t, node, id+"/c1", "hello", 1)
		out, _, _ := secretsCLI(t, append([]string{"log", "show", "conversation/" + id + "/c1", "-o", "json"}, auth...)...)
		if !strings.Contains(out, "refused") || !strings.Contains(out, "serve --provider") {
			t.Errorf("%s: the failed call does not say the config is refused naming serve --provider:\n%s", id, out)
		}
	}
	if got := listener.seen(); len(got) != 0 {
		t.Fatalf("the project's own listener was called %d times, with %v", len(got), got)
	}

	// The operator's provider without a key variable sends no key.
	node = StartNode(t, tools, t.TempDir(), "--provider", "local=openai,base_url="+local.URL+"/v1,model=m1")
	auth = []string{"--nats-url", node.URL, "--user", "admin", "--password", password}
	proj := t.TempDir()
	writeTree(t, proj, map[string]string{".jido/config.yaml": "llm: {provider: local, model: m1}\n"})
	if _, stderr, code := secretsCLI(t, append([]string{"project", "open", proj, "--id", "p7c"}, auth...)...); code != 0 {
		t.Fatalf("project open: %d %s", code, stderr)
	}
	awaitLLMFailed(t, node, "p7c/c1", "hello", 1)
	got := local.seen()
	if len(got) != 1 {
		t.Fatalf("the operator's provider was called %d times, want once (a 400 is not retried)", len(got))
	}
	for name, vals := range got[0] {
		noneOf(t, "header "+name+" sent to the keyless provider", strings.Join(vals, " "), apiKey, password)
	}
	// A model the provider does not allow is refused before any call.
	writeTree(t, proj, map[string]string{".jido/config.yaml": "llm: {provider: local, model: other}\n"})
	awaitLLMFailed(t, node, "p7c/c2", "hello", 1)
	if n := len(local.seen()); n != 1 {
		t.Fatalf("a model the provider does not list reached it (%d calls)", n)
	}
}

// Item 8: a model server's error text that echoed the key landed in the
// log, in conversation.llm.failed, on jido.emit.> and in the projections.
// Nothing that leaves a provider call holds a secret of the node.
func TestAuditAnEchoedKeyNeverLands(t *testing.T) {
	const key = "sk-e2e-model-key-8-0123456789"
	t.Setenv("JIDO_E2E_MODEL_KEY", key)
	// A 500 (retried) then a 401 (the end of the turn): both echo the key.
	srv := newModelServer(t, 500, 401)
	node := StartNode(t, tools, t.TempDir(), "--provider", "echo=openai,base_url="+srv.URL+"/v1,key_env=JIDO_E2E_MODEL_KEY")
	proj := t.TempDir()
	writeTree(t, proj, map[string]string{".jido/config.yaml": "llm: {provider: echo, model: m}\n"})
	tools.Run(t, "project", "open", proj, "--id", "p8", "--nats-url", node.URL)
	emitted, _ := node.StartNATS(t, "sub", "jido.emit.>")
	subscribed(t, emitted)
	awaitLLMFailed(t, node, "p8/c1", "hello", 2)
	if got := srv.seen(); len(got) != 2 || got[0].Get("Authorization") != "Bearer "+key {
		t.Fatalf("the model server saw %d requests (%v): the test proves nothing", len(got), got)
	}
	secrets := []string{key, base64.StdEncoding.EncodeToString([]byte("Bearer " + key))[:20], base64.StdEncoding.EncodeToString([]byte(key))[:20]}
	logShow := tools.Run(t, "log", "show", "conversation/p8/c1", "-o", "json", "--nats-url", node.URL)
	if !strings.Contains(logShow, "[redacted $JIDO_E2E_MODEL_KEY]") || !strings.Contains(logShow, `"status":500`) || !strings.Contains(logShow, `"status":401`) {
		t.Errorf("log show does not hold both attempts with the key redacted:\n%s", logShow)
	}
	noneOf(t, "log show", logShow, secrets...)
	for _, view := range [][]string{{}, {"--view", "diagnostics"}, {"-o", "json"}, {"--view", "diagnostics", "-o", "json"}} {
		out := tools.Run(t, append([]string{"conv", "show", "p8/c1", "--nats-url", node.URL}, view...)...)
		noneOf(t, "conv show "+strings.Join(view, " "), out, secrets...)
	}
	// What jido.emit.> carried: every committed event of the turn came
	// before the second failure the CLI waited for.
	if !strings.Contains(emitted.String(), "conversation.llm.failed") {
		t.Fatalf("the jido.emit.> subscriber saw no llm.failed:\n%s", emitted.String())
	}
	noneOf(t, "jido.emit.>", emitted.String(), secrets...)
	noneOf(t, "serve's log", node.Logs(), secrets...)
}

// Item 9: a refused NATS message carrying Authorization: Bearer … or
// X-Api-Key was stored verbatim in the dlq stream and sent on
// jido.dlq.*. Both keep the names and a digest of each value, in both
// content modes.
func TestAuditDeadLettersKeepCredentialDigests(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	const (
		token   = "e2e-bearer-token-9"
		apiKey  = "e2e-api-key-9"
		attrKey = "e2e-ce-apikey-9"
		cookie  = "e2e-session-9"
	)
	dlq, wait := node.StartNATS(t, "sub", "jido.dlq.>", "--count", "2")
	subscribed(t, dlq)
	// Binary mode (a plain publish with headers) and structured mode,
	// both to an agent that does not exist: refused not_found.
	node.NATS(t, "pub", "jido.agent.nosuch.counter.increment", `{"by":1}`,
		"-H", "Authorization:Bearer "+token, "-H", "X-Api-Key:"+apiKey, "-H", "ce-apikey:"+attrKey)
	node.NATS(t, "pub", "jido.agent.nosuch.counter.increment",
		`{"specversion":"1.0","id":"s9","source":"e2e","type":"counter.increment","apikey":"`+attrKey+`","data":{"by":1}}`,
		"-H", "Content-Type:application/cloudevents+json", "-H", "Cookie:sid="+cookie, "-H", "Proxy-Authorization:Basic "+token)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	secrets := []string{token, apiKey, attrKey, cookie}
	published := dlq.String()
	noneOf(t, "jido.dlq.>", published, secrets...)
	for _, name := range []string{"Authorization", "X-Api-Key", "Ce-Apikey", "Cookie", "Proxy-Authorization"} {
		if !strings.Contains(strings.ToLower(published), strings.ToLower(name)+": hmac-sha256:") {
			t.Errorf("jido.dlq.> does not show %s with its digest:\n%s", name, published)
		}
	}
	stored := tools.Run(t, "log", "show", "dlq", "-o", "json", "--nats-url", node.URL)
	noneOf(t, "log show dlq", stored, secrets...)
	// The body is kept as data (base64): decode it to look inside.
	var page struct {
		Entries []struct {
			Event struct {
				Data struct {
					Header map[string][]string `json:"header"`
					Data   []byte              `json:"data"`
				} `json:"data"`
			} `json:"event"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(stored), &page); err != nil || len(page.Entries) != 2 {
		t.Fatalf("log show dlq: %v, %d entries:\n%s", err, len(page.Entries), stored)
	}
	for _, e := range page.Entries {
		noneOf(t, "a stored dead letter's body", string(e.Event.Data.Data), secrets...)
		for name, vals := range e.Event.Data.Header {
			if strings.Contains(strings.ToLower(name), "auth") || strings.Contains(strings.ToLower(name), "key") || name == "Cookie" {
				if len(vals) != 1 || !strings.HasPrefix(vals[0], "hmac-sha256:") {
					t.Errorf("stored header %s = %q, want its digest", name, vals)
				}
			}
		}
	}
	if !strings.Contains(string(page.Entries[1].Event.Data.Data), `"apikey":"hmac-sha256:`) {
		t.Errorf("the structured event's apikey attribute is not a digest: %s", page.Entries[1].Event.Data.Data)
	}
}

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// The operator chooses what commands inherit and where keys go, but
// cannot hand the node's own credentials out: refused at start.
func TestStartRefusesHandingOutTheNodesSecrets(t *testing.T) {
	environ := []string{"PATH=/bin", "JIDO_PASSWORD=admin-pw-value", "OPENAI_API_KEY=sk-key-value",
		"JIDO_SECRET_HOOK=hook-value", "CI_TOKEN=http-token-value", "COPY=admin-pw-value", "GOPATH=/go"}
	http := HTTPConfig{}
	http.Tokens = map[string]string{"http-token-value": "ci"}
	cases := []struct {
		name string
		cfg  Config
		want string // "" accepted
	}{
		{"the defaults", Config{}, ""},
		{"a plain variable", Config{CommandEnv: []string{"PATH", "GOPATH"}}, ""},
		{"the admin password", Config{CommandEnv: []string{"PATH", "JIDO_PASSWORD"}}, "JIDO_PASSWORD holds one of this node's secrets"},
		{"a credential by convention, unset", Config{CommandEnv: []string{"JIDO_TOKEN"}}, "JIDO_TOKEN holds"},
		{"a provider key", Config{CommandEnv: []string{"OPENAI_API_KEY"}}, "OPENAI_API_KEY holds"},
		{"an operator provider's key", Config{CommandEnv: []string{"GOPATH"}, Providers: []llm.Endpoint{{Name: "gw", Kind: "openai", KeyEnv: "GOPATH"}}}, "GOPATH holds"},
		{"a webhook secret", Config{CommandEnv: []string{"JIDO_SECRET_HOOK"}}, "JIDO_SECRET_HOOK holds"},
		{"an HTTP token's variable", Config{CommandEnv: []string{"CI_TOKEN"}, HTTP: http}, "CI_TOKEN holds"},
		{"a named secret variable", Config{CommandEnv: []string{"CI_TOKEN"}, SecretEnv: []string{"CI_TOKEN"}}, "CI_TOKEN holds"},
		{"a copy of the password", Config{CommandEnv: []string{"COPY"}}, "COPY holds"},
		{"HOME", Config{CommandEnv: []string{"HOME"}}, "HOME is the project folder"},
		{"not a name", Config{CommandEnv: []string{"A=B"}}, "not a variable name"},
		{"a provider sending the admin password", Config{Providers: []llm.Endpoint{{Name: "x", Kind: "openai", BaseURL: "http://127.0.0.1:9/v1", KeyEnv: "JIDO_PASSWORD"}}}, "own credentials"},
		{"a provider sending a webhook secret", Config{Providers: []llm.Endpoint{{Name: "x", Kind: "openai", KeyEnv: "JIDO_SECRET_HOOK"}}}, "own credentials"},
		{"a bad provider", Config{Providers: []llm.Endpoint{{Name: "x", Kind: "gpt"}}}, "kind"},
	}
	for _, c := range cases {
		_, err := loadSecrets(c.cfg, environ)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.want)
		}
	}
	// Through Start: an error, nothing running.
	t.Setenv("JIDO_PASSWORD", "admin-pw-value")
	if n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{DontListen: true}, CommandEnv: []string{"JIDO_PASSWORD"}}); err == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // nothing to wait for: it should not have started
		_ = n.Shutdown(ctx)
		t.Fatal("a node started that lets commands inherit JIDO_PASSWORD")
	}
}

func TestNodeSecretsScrubEveryCredential(t *testing.T) {
	http := HTTPConfig{}
	http.ProjectTokens = map[string]map[string]string{"p1": {"project-token-value": "bot"}}
	key := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(key, []byte("tls-private-key-contents\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := loadSecrets(Config{NATS: NATSConfig{Password: "flag-password-value", TLS: TLSFiles{Key: key}}, HTTP: http},
		[]string{"JIDO_TOKEN=env-token-value", "ANTHROPIC_API_KEY=sk-ant-value", "JIDO_SECRET_X=hook-value"})
	if err != nil {
		t.Fatal(err)
	}
	text := "flag-password-value env-token-value sk-ant-value hook-value project-token-value tls-private-key-contents"
	got := s.set.Scrub(text)
	for _, v := range strings.Fields(text) {
		if strings.Contains(got, v) {
			t.Errorf("%s not scrubbed: %s", v, got)
		}
	}
}

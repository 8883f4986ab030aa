package main

import (
	"slices"
	"strings"
	"testing"
)

// TestServeHTTPFlags: --http, the token from the variable --http-token-env
// names (under that name, an admin), repeatable --http-allow-origin and
// --http-allow-host; the file's http: section fills what no flag gave.
func TestServeHTTPFlags(t *testing.T) {
	env := map[string]string{"JIDO_HTTP_TOKEN": "tok-from-env-0123", "P1_TOKEN": "p1-secret-4567", "CI_TOKEN": "ci-secret-89ab"}
	cfg, err := serveFlags(t, env, "--http", "127.0.0.1:8080", "--http-token-env", "JIDO_HTTP_TOKEN",
		"--http-allow-origin", "http://localhost:6274", "--http-allow-origin", "https://app.example.com", "--http-allow-host", "jido.internal")
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.http
	if h.Listen != "127.0.0.1:8080" || h.Tokens["tok-from-env-0123"] != "JIDO_HTTP_TOKEN" || len(h.Tokens) != 1 ||
		!slices.Equal(h.AllowOrigins, []string{"http://localhost:6274", "https://app.example.com"}) || !slices.Equal(h.AllowHosts, []string{"jido.internal"}) {
		t.Fatalf("http = %+v", h)
	}

	path := writeConfig(t, `
http:
  listen: 0.0.0.0:8443
  token_env: JIDO_HTTP_TOKEN
  allow_origins: ["http://localhost:6274"]
  allow_hosts: ["jido.example.com"]
  max_body_bytes: 4096
  tokens:
    - {name: ci, env: CI_TOKEN}
    - {name: p1-bot, env: P1_TOKEN, project: p1, max_mode: plan}
`)
	cfg, err = serveFlags(t, env, "--config", path, "--http", "127.0.0.1:9000")
	if err != nil {
		t.Fatal(err)
	}
	h = cfg.http
	if h.Listen != "127.0.0.1:9000" || h.MaxBodyBytes != 4096 || h.Tokens["tok-from-env-0123"] != "JIDO_HTTP_TOKEN" || h.Tokens["ci-secret-89ab"] != "ci" ||
		h.ProjectTokens["p1"]["p1-secret-4567"] != "p1-bot" || !slices.Equal(h.AllowOrigins, []string{"http://localhost:6274"}) || !slices.Equal(h.AllowHosts, []string{"jido.example.com"}) {
		t.Fatalf("http from the file = %+v", h)
	}
	// A token's max_mode bounds the conversations its callers start.
	if len(h.MaxModes) != 1 || h.MaxModes["p1-bot"] != "plan" {
		t.Fatalf("http max modes = %v, want p1-bot: plan", h.MaxModes)
	}
	// The operator's token is the admin (it sees every caller's A2A
	// tasks); the file's tokens are not.
	if !slices.Equal(h.Admins, []string{"JIDO_HTTP_TOKEN"}) {
		t.Fatalf("http admins = %v, want the --http-token-env token's name only", h.Admins)
	}

	// Off unless given.
	cfg, err = serveFlags(t, env)
	if err != nil || cfg.http.Listen != "" {
		t.Fatalf("no --http: %+v %v", cfg.http, err)
	}
}

// TestServeHTTPRefusals: a token that would be on the command line, a
// variable unset or empty, a token for nothing: each an error saying what
// to do, before the node starts.
func TestServeHTTPRefusals(t *testing.T) {
	env := map[string]string{"EMPTY": ""}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:8080", "--http-token-env", "UNSET_VAR"}, "UNSET_VAR is not set"},
		{[]string{"--http", "127.0.0.1:8080", "--http-token-env", "EMPTY"}, "EMPTY is not set or empty"},
		{[]string{"--http", "127.0.0.1:8080", "--http-token-env", "s3cret-token-value!"}, "not a variable name"},
		{[]string{"--http-token-env", "EMPTY"}, "without --http"},
		{[]string{"--config", writeConfig(t, "http:\n  listen: 127.0.0.1:1\n  tokens:\n    - {name: ci, env: NOPE}\n")}, "NOPE is not set"},
		{[]string{"--config", writeConfig(t, "http:\n  listen: 127.0.0.1:1\n  tokens:\n    - {name: ci, token: inline-secret}\n")}, `unknown field "token"`},
		{[]string{"--config", writeConfig(t, "http:\n  listen: 127.0.0.1:1\n  tokens:\n    - {env: EMPTY}\n")}, "name"},
		{[]string{"--config", writeConfig(t, "http:\n  listen: 127.0.0.1:1\n  tokens:\n    - {name: ci, env: P1_TOKEN, max_mode: readonly}\n")}, `max_mode: invalid_request: mode "readonly": want plan`},
	}
	for _, c := range cases {
		_, err := serveFlags(t, env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
}

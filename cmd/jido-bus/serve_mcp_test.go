package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects"
)

func TestServeMCPRemotes(t *testing.T) {
	path := writeConfig(t, `
mcp_remotes:
  - {url: "https://mcp.example.com/mcp", bearer_env: ISSUES_TOKEN}
  - {url: "http://127.0.0.1:8931/mcp"}
`)
	env := map[string]string{"ISSUES_TOKEN": "tok", "LOCAL_TOKEN": "tok2"}
	cfg, err := serveFlags(t, env, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	want := []projects.MCPRemote{{URL: "https://mcp.example.com/mcp", BearerEnv: "ISSUES_TOKEN"}, {URL: "http://127.0.0.1:8931/mcp"}}
	if !slices.Equal(cfg.mcpRemotes, want) || !slices.Contains(cfg.secretEnv, "ISSUES_TOKEN") {
		t.Fatalf("from the file: remotes %+v, secret variables %q", cfg.mcpRemotes, cfg.secretEnv)
	}
	// The flag, given, replaces the file's list.
	cfg, err = serveFlags(t, env, "--config", path, "--mcp-remote", "http://localhost:9/mcp,bearer_env=LOCAL_TOKEN", "--mcp-remote", "https://[::1]/mcp")
	if err != nil {
		t.Fatal(err)
	}
	want = []projects.MCPRemote{{URL: "http://localhost:9/mcp", BearerEnv: "LOCAL_TOKEN"}, {URL: "https://[::1]/mcp"}}
	if !slices.Equal(cfg.mcpRemotes, want) || !slices.Contains(cfg.secretEnv, "LOCAL_TOKEN") || slices.Contains(cfg.secretEnv, "ISSUES_TOKEN") {
		t.Fatalf("from the flags: remotes %+v, secret variables %q", cfg.mcpRemotes, cfg.secretEnv)
	}
}

func TestServeMCPRemoteRefused(t *testing.T) {
	env := map[string]string{"TOK": "x", "OPENAI_API_KEY": "sk", "JIDO_SECRET_HOOK": "s", "MY_HTTP": "h"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mcp-remote", "://nope"}, "does not parse"},
		{[]string{"--mcp-remote", "ftp://mcp.example.com/"}, "absolute http(s)"},
		{[]string{"--mcp-remote", "mcp.example.com/mcp"}, "absolute http(s)"},
		{[]string{"--mcp-remote", "http://mcp.example.com/mcp"}, "use https"},
		{[]string{"--mcp-remote", "http://10.0.0.5/mcp"}, "use https"},
		{[]string{"--mcp-remote", "http://localhost.example.com/mcp"}, "use https"},
		{[]string{"--mcp-remote", "https://u:p@mcp.example.com/mcp"}, "user or password"},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp#x"}, "fragment"},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp,bearer_env=not a name"}, "not a variable name"},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp,bearer_env=UNSET_TOKEN"}, "export UNSET_TOKEN="},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp,token=TOK"}, "is not bearer_env=VAR"},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp,bearer_env=OPENAI_API_KEY"}, "model provider openai"},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp,bearer_env=JIDO_TOKEN"}, "own credentials"},
		{[]string{"--mcp-remote", "https://mcp.example.com/mcp,bearer_env=JIDO_SECRET_HOOK"}, "webhook signing secret"},
		{[]string{"--http", "127.0.0.1:0", "--http-token-env", "MY_HTTP", "--mcp-remote", "https://mcp.example.com/mcp,bearer_env=MY_HTTP"}, "own credentials"},
		{[]string{"--mcp-remote", "https://a.example/mcp,bearer_env=TOK", "--mcp-remote", "https://a.example/mcp"}, "listed twice"},
	} {
		_, err := serveFlags(t, env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--mcp-remote") {
			t.Errorf("%q: %v, want an error naming --mcp-remote and saying %q", c.args, err, c.want)
		}
	}
	path := writeConfig(t, "mcp_remotes:\n  - {url: \"http://mcp.example.com/mcp\"}\n")
	if _, err := serveFlags(t, env, "--config", path); err == nil || !strings.Contains(err.Error(), "mcp_remotes[0]") || !strings.Contains(err.Error(), "use https") {
		t.Errorf("plain http in the file: %v, want it refused naming mcp_remotes[0]", err)
	}
	path = writeConfig(t, "mcp_remotes:\n  - {url: \"https://mcp.example.com/mcp\", token: x}\n")
	if _, err := serveFlags(t, env, "--config", path); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("an unknown key in mcp_remotes: %v, want it refused", err)
	}
}

package main

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// serveMCPRemoteFile is one entry of mcp_remotes: in serve's --config: a
// streamable-HTTP MCP server projects may use (url: in a project's
// mcp_servers:), and the variable holding the token sent to it.
type serveMCPRemoteFile struct {
	URL       string `yaml:"url"`
	BearerEnv string `yaml:"bearer_env"`
}

const mcpRemoteForm = "URL[,bearer_env=VAR], e.g. --mcp-remote https://mcp.example.com/mcp,bearer_env=ISSUES_MCP_TOKEN"

var mcpEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func addServeMCPFlags(cmd *cobra.Command, cfg *serveConfig) {
	cmd.Flags().StringArrayVar(&cfg.mcpRemoteFlags, "mcp-remote", nil, "a streamable-HTTP MCP server projects may use (url: in a project's mcp_servers:, written exactly as here): "+mcpRemoteForm+"; bearer_env names the variable of serve's environment holding the token sent to that host only (never to a command, never logged); https, or http to a loopback address only (repeatable; mcp_remotes in --config)")
}

// resolveServeMCP completes the MCP servers projects may reach over HTTP
// from the file's mcp_remotes (the flag, given, replaces them), checks
// them, and adds their token variables to the node's secrets. It runs
// after resolveServeSecrets: a token variable may not be one of the
// node's other secrets, which that server would then receive.
func resolveServeMCP(cfg *serveConfig, f []serveMCPRemoteFile, changed func(string) bool, getenv func(string) string) error {
	type entry struct {
		where string
		r     projects.MCPRemote
	}
	var entries []entry
	if changed("mcp-remote") {
		for _, s := range cfg.mcpRemoteFlags {
			r, err := parseMCPRemoteFlag(s)
			if err != nil {
				return err
			}
			entries = append(entries, entry{"--mcp-remote " + s, r})
		}
	} else {
		for i, r := range f {
			entries = append(entries, entry{fmt.Sprintf("--config %s: mcp_remotes[%d]", cfg.configPath, i), projects.MCPRemote{URL: r.URL, BearerEnv: r.BearerEnv}})
		}
	}
	others, err := otherSecretEnv(cfg)
	if err != nil {
		return err
	}
	cfg.mcpRemotes = nil
	for _, e := range entries {
		if err := checkMCPRemote(e.r, others, getenv); err != nil {
			return fmt.Errorf("%s: %w", e.where, err)
		}
		if slices.ContainsFunc(cfg.mcpRemotes, func(r projects.MCPRemote) bool { return r.URL == e.r.URL }) {
			return fmt.Errorf("%s: url %s is listed twice: list each server once, with the one bearer_env its token is in", e.where, e.r.URL)
		}
		cfg.mcpRemotes = append(cfg.mcpRemotes, e.r)
		if e.r.BearerEnv != "" && !slices.Contains(cfg.secretEnv, e.r.BearerEnv) {
			cfg.secretEnv = append(cfg.secretEnv, e.r.BearerEnv)
		}
	}
	return nil
}

// otherSecretEnv names the variables holding the node's other secrets:
// its own credentials, its HTTP tokens, the providers' keys. A server's
// bearer_env naming one would hand it to that server.
func otherSecretEnv(cfg *serveConfig) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range node.CredentialEnv() {
		out[name] = "one of the node's own credentials"
	}
	for _, name := range cfg.secretEnv {
		out[name] = "one of the node's own credentials (its NATS or HTTP tokens)"
	}
	providers, err := llm.Endpoints(cfg.providers...)
	if err != nil {
		return nil, err
	}
	for _, p := range providers {
		if p.KeyEnv != "" {
			out[p.KeyEnv] = "the key of the model provider " + p.Name
		}
	}
	return out, nil
}

// parseMCPRemoteFlag reads URL[,bearer_env=VAR]. A URL holding a comma
// goes in --config.
func parseMCPRemoteFlag(s string) (projects.MCPRemote, error) {
	parts := strings.Split(s, ",")
	r := projects.MCPRemote{URL: parts[0]}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k != "bearer_env" {
			return r, fmt.Errorf("--mcp-remote %q: %q is not bearer_env=VAR: want %s (a URL holding a comma goes in --config: mcp_remotes)", s, p, mcpRemoteForm)
		}
		r.BearerEnv = v
	}
	return r, nil
}

// checkMCPRemote refuses what would send a token or a project's tool
// calls where the operator did not mean to: a URL that is not absolute
// http(s), plain http beyond loopback (anyone on the path reads the token
// and can answer in the server's place), credentials in the URL (they
// would be in every project's config), and a token variable that is not
// a name, not set, or one of the node's other secrets.
func checkMCPRemote(r projects.MCPRemote, others map[string]string, getenv func(string) string) error {
	u, err := url.Parse(r.URL)
	switch {
	case r.URL == "":
		return fmt.Errorf("no url: want %s", mcpRemoteForm)
	case err != nil:
		return fmt.Errorf("url %q does not parse (%v): want an absolute https URL such as https://mcp.example.com/mcp", r.URL, err)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "", u.Opaque != "":
		return fmt.Errorf("url %q: want an absolute http(s) URL such as https://mcp.example.com/mcp (a stdio server is a project's mcp_servers: command)", r.URL)
	case u.User != nil:
		return fmt.Errorf("url %q holds a user or password, which every project listing the URL would then hold: remove it and put the token in a variable named by bearer_env", u.Redacted())
	case u.Fragment != "":
		return fmt.Errorf("url %q has a #fragment, which HTTP never sends: remove it", r.URL)
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return fmt.Errorf("url %q is plain http to %s: anyone on the way would read the token and could answer in the server's place; use https, or reach the server through a tunnel ending on 127.0.0.1", r.URL, u.Hostname())
	}
	if r.BearerEnv == "" {
		return nil
	}
	if !mcpEnvName.MatchString(r.BearerEnv) {
		return fmt.Errorf("bearer_env %q is not a variable name: give the NAME of a variable of serve's environment holding the token (export ISSUES_MCP_TOKEN=…; bearer_env=ISSUES_MCP_TOKEN), never the token itself", r.BearerEnv)
	}
	if what, ok := others[r.BearerEnv]; ok {
		return fmt.Errorf("bearer_env %s holds %s, which %s would then receive: give the server's token a variable of its own", r.BearerEnv, what, u.Host)
	}
	if strings.HasPrefix(r.BearerEnv, "JIDO_SECRET_") {
		return fmt.Errorf("bearer_env %s is a webhook signing secret (JIDO_SECRET_*), which %s would then receive: give the server's token a variable of its own", r.BearerEnv, u.Host)
	}
	if getenv(r.BearerEnv) == "" {
		return fmt.Errorf("bearer_env %s is not set or empty in serve's environment: export %s=<the server's token> before serve, or leave bearer_env out to send no token", r.BearerEnv, r.BearerEnv)
	}
	return nil
}

// loopbackHost says whether host is a loopback address or localhost. A
// name is not looked up: what it resolves to may change after the check.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

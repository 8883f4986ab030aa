package main

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/conversation"
)

// serveHTTPFile is the http: section of serve --config: the gateways'
// listener. Tokens are never in the file, only the names of the
// environment variables that hold them.
type serveHTTPFile struct {
	Listen       string           `yaml:"listen"`
	TokenEnv     string           `yaml:"token_env"`
	AllowOrigins []string         `yaml:"allow_origins"`
	AllowHosts   []string         `yaml:"allow_hosts"`
	MaxBodyBytes int64            `yaml:"max_body_bytes"`
	Tokens       []serveHTTPToken `yaml:"tokens"`
}

// serveHTTPToken is one more token: its name (the caller recorded in the
// projects' logs), the variable holding it, and the one project it is
// limited to, if any.
type serveHTTPToken struct {
	Name    string `yaml:"name"`
	Env     string `yaml:"env"`
	Project string `yaml:"project"`
	// MaxMode is the loosest permission mode the conversations this
	// token's callers start may have (plan or ask; auto or absent: any).
	MaxMode string `yaml:"max_mode"`
}

func addServeHTTPFlags(cmd *cobra.Command, cfg *serveConfig) {
	f := cmd.Flags()
	f.StringVar(&cfg.http.Listen, "http", "", "serve the MCP and A2A gateways on http://HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one); off when empty; a non-loopback address needs --http-token-env")
	f.StringVar(&cfg.httpTokenEnv, "http-token-env", "", "the environment variable holding the bearer token HTTP clients must send (the token itself never goes on the command line)")
	f.StringArrayVar(&cfg.http.AllowOrigins, "http-allow-origin", nil, "a browser origin (scheme://host[:port]) allowed to call the gateways (repeatable; requests without Origin are always allowed)")
	f.StringArrayVar(&cfg.http.AllowHosts, "http-allow-host", nil, "a host name the Host header may name besides the loopback names (repeatable; on a non-loopback --http, any host unless given)")
	f.Int64Var(&cfg.http.MaxBodyBytes, "http-max-body-bytes", 0, "largest HTTP request body, in bytes (default 1 MiB)")
}

// envName is what a variable name looks like; anything else given to
// --http-token-env is most likely the token itself.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolveServeHTTP completes cfg.http from the file's section f (what no
// flag gave) and reads the tokens from the environment.
func resolveServeHTTP(cfg *serveConfig, f serveHTTPFile, changed func(string) bool, getenv func(string) string) error {
	if f.Listen != "" && !changed("http") {
		cfg.http.Listen = f.Listen
	}
	if f.TokenEnv != "" && !changed("http-token-env") {
		cfg.httpTokenEnv = f.TokenEnv
	}
	if !changed("http-allow-origin") && f.AllowOrigins != nil {
		cfg.http.AllowOrigins = f.AllowOrigins
	}
	if !changed("http-allow-host") && f.AllowHosts != nil {
		cfg.http.AllowHosts = f.AllowHosts
	}
	if !changed("http-max-body-bytes") && f.MaxBodyBytes != 0 {
		cfg.http.MaxBodyBytes = f.MaxBodyBytes
	}
	if cfg.http.Listen == "" {
		if cfg.httpTokenEnv != "" || len(f.Tokens) > 0 {
			return errors.New("--http-token-env (or http.tokens in --config) without --http: no listener would use the token; give --http HOST:PORT")
		}
		return nil
	}
	read := func(what, name string) (string, error) {
		if !envName.MatchString(name) {
			return "", fmt.Errorf("%s %q is not a variable name: give the NAME of an environment variable holding the token (export JIDO_HTTP_TOKEN=…; --http-token-env JIDO_HTTP_TOKEN), never the token itself, which ps would show", what, name)
		}
		v := getenv(name)
		if v == "" {
			return "", fmt.Errorf("%s: the variable %s is not set or empty: export %s=<a long random secret> (e.g. $(openssl rand -hex 32)) before serve", what, name, name)
		}
		return v, nil
	}
	if cfg.httpTokenEnv != "" {
		tok, err := read("--http-token-env", cfg.httpTokenEnv)
		if err != nil {
			return err
		}
		cfg.http.Tokens = map[string]string{tok: cfg.httpTokenEnv}
		// The operator's own token: it sees every caller's A2A tasks.
		cfg.http.Admins = []string{cfg.httpTokenEnv}
	}
	for i, t := range f.Tokens {
		where := fmt.Sprintf("--config: http.tokens[%d]", i)
		if t.Name == "" {
			return fmt.Errorf("%s needs a name: it names the caller in the projects' logs", where)
		}
		if err := conversation.CheckMode(t.MaxMode); err != nil {
			return fmt.Errorf("%s max_mode: %w", where, err)
		}
		tok, err := read(where+" env", t.Env)
		if err != nil {
			return err
		}
		if t.MaxMode != "" && t.MaxMode != conversation.ModeAuto {
			if cfg.http.MaxModes == nil {
				cfg.http.MaxModes = map[string]string{}
			}
			cfg.http.MaxModes[t.Name] = t.MaxMode
		}
		if t.Project == "" {
			if cfg.http.Tokens == nil {
				cfg.http.Tokens = map[string]string{}
			}
			cfg.http.Tokens[tok] = t.Name
			continue
		}
		if cfg.http.ProjectTokens == nil {
			cfg.http.ProjectTokens = map[string]map[string]string{}
		}
		if cfg.http.ProjectTokens[t.Project] == nil {
			cfg.http.ProjectTokens[t.Project] = map[string]string{}
		}
		cfg.http.ProjectTokens[t.Project][tok] = t.Name
	}
	return nil
}

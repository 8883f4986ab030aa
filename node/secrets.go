package node

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/projects/assistant/llm"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/secrets"
)

// CredentialEnv returns the variables that hold a node's own credentials
// by convention (serve reads JIDO_PASSWORD and JIDO_TOKEN; the docs name
// JIDO_HTTP_TOKEN for --http-token-env). They are secrets whether or not
// this node uses them: no command gets them and no provider sends them.
func CredentialEnv() []string { return []string{"JIDO_PASSWORD", "JIDO_TOKEN", "JIDO_HTTP_TOKEN"} }

// nodeSecrets is what the node knows of its secrets, made once at start:
// the set itself, the providers (whose keys are in it), and the rule for
// what commands inherit.
type nodeSecrets struct {
	set       *secrets.Set
	providers []llm.Endpoint
	inherit   *policy.Inherit
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// loadSecrets gathers the node's secrets from cfg and environ and checks
// the operator's settings against them: a provider whose key variable is
// one of the node's credentials, or a variable commands may inherit that
// holds a secret, is refused here, before anything starts — the
// operator may choose, but not hand the node's own keys out.
func loadSecrets(cfg Config, environ []string) (nodeSecrets, error) {
	providers, err := llm.Endpoints(cfg.Providers...)
	if err != nil {
		return nodeSecrets{}, fmt.Errorf("providers: %w", err)
	}
	var values []secrets.Value
	if cfg.NATS.Password != "" {
		values = append(values, secrets.Value{Label: "the node's NATS password", Secret: cfg.NATS.Password})
	}
	if cfg.NATS.Token != "" {
		values = append(values, secrets.Value{Label: "the node's NATS token", Secret: cfg.NATS.Token})
	}
	// A TLS key's path is no secret, its contents are; a file that cannot
	// be read is the NATS setup's to report.
	if cfg.NATS.TLS.Key != "" {
		if pem, err := os.ReadFile(cfg.NATS.TLS.Key); err == nil && len(pem) > 0 {
			values = append(values, secrets.Value{Label: "the TLS key " + cfg.NATS.TLS.Key, Secret: strings.TrimSpace(string(pem))})
		}
	}
	for tok, name := range cfg.HTTP.Tokens {
		values = append(values, secrets.Value{Label: "HTTP token " + name, Secret: tok})
	}
	for project, m := range cfg.HTTP.ProjectTokens {
		for tok, name := range m {
			values = append(values, secrets.Value{Label: "HTTP token " + name + " of " + project, Secret: tok})
		}
	}
	credentials := secrets.New(environ, append(CredentialEnv(), cfg.SecretEnv...), values...)
	for _, p := range providers {
		if p.KeyEnv != "" && credentials.Holds(p.KeyEnv, getenv(environ, p.KeyEnv)) {
			return nodeSecrets{}, fmt.Errorf("provider %s: key_env %s holds one of this node's own credentials (its NATS or HTTP password or token, or a webhook secret): the provider would send it to %s; give the provider a variable of its own", p.Name, p.KeyEnv, orDefault(p.BaseURL, "its API"))
		}
	}
	names := append(CredentialEnv(), cfg.SecretEnv...)
	for _, p := range providers {
		if p.KeyEnv != "" {
			names = append(names, p.KeyEnv)
		}
	}
	set := secrets.New(environ, names, values...)
	inherit := &policy.Inherit{Names: cfg.CommandEnv, Secret: set.Holds}
	for _, name := range cfg.CommandEnv {
		switch {
		case !envVarName.MatchString(name):
			return nodeSecrets{}, fmt.Errorf("command env: %q is not a variable name (letters, digits and '_')", name)
		case name == "HOME" || name == "TMPDIR":
			return nodeSecrets{}, fmt.Errorf("command env: %s is set for each command (HOME is the project folder, TMPDIR its private temporary folder); remove it", name)
		case set.Holds(name, getenv(environ, name)):
			return nodeSecrets{}, fmt.Errorf("command env: %s holds one of this node's secrets (its credentials, a provider's key or a webhook secret), which no command ever gets; remove it from --command-env (commands.env in the serve config)", name)
		}
	}
	return nodeSecrets{set: set, providers: providers, inherit: inherit}, nil
}

// getenv is os.Getenv over environ (the last value of a name wins).
func getenv(environ []string, name string) string {
	for _, kv := range slices.Backward(environ) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/node"
)

// serveFile is the shape of `serve --config FILE` (YAML). Every key is
// optional; a key it does not know is an error naming it and its line, so
// that a misspelt setting never silently falls back to a default.
type serveFile struct {
	Listen   string      `yaml:"listen"`
	NATSURL  string      `yaml:"nats_url"`
	DataDir  string      `yaml:"data_dir"`
	Prefix   string      `yaml:"prefix"`
	Metrics  string      `yaml:"metrics"`
	Insecure bool        `yaml:"insecure"`
	Users    []serveUser `yaml:"users"`
	TLS      struct {
		Cert          string `yaml:"cert"`
		Key           string `yaml:"key"`
		CA            string `yaml:"ca"`
		VerifyClients bool   `yaml:"verify_clients"`
	} `yaml:"tls"`
	Webhooks struct {
		Allow        []string `yaml:"allow"`
		AllowPrivate []string `yaml:"allow_private"`
	} `yaml:"webhooks"`
	HTTP      serveHTTPFile       `yaml:"http"`
	Commands  serveCommandsFile   `yaml:"commands"`
	Providers []serveProviderFile `yaml:"providers"`
	// ContextWindow is the window, in tokens, of a model whose provider
	// gives it none (serve --context-window).
	ContextWindow int64            `yaml:"context_window"`
	Sandbox       serveSandboxFile `yaml:"sandbox"`
	// Checkpoints is the checkpoints: section (serve_checkpoints.go).
	Checkpoints serveCheckpointsFile `yaml:"checkpoints"`
	// EmitStream is the emit_stream: section (serve_emitstream.go).
	EmitStream serveEmitStreamFile `yaml:"emit_stream"`
	// Cluster is the cluster: section (serve_cluster.go).
	Cluster serveClusterFile `yaml:"cluster"`
	// MCPRemotes is the mcp_remotes: section (serve_mcp.go).
	MCPRemotes []serveMCPRemoteFile `yaml:"mcp_remotes"`
}

// serveUser is one entry of the file's users: a name, a role, and either a
// bcrypt hash of the password or the public nkey.
type serveUser struct {
	Name     string `yaml:"name"`
	Password string `yaml:"password"`
	NKey     string `yaml:"nkey"`
	Role     string `yaml:"role"`
}

// The environment variables serve reads its secrets from, so that they
// never appear on a command line (which `ps` shows every user).
const (
	envToken    = "JIDO_TOKEN"    // the token clients must give (one admin), or the node gives --nats-url
	envUser     = "JIDO_USER"     // the name that goes with JIDO_PASSWORD; default "admin"
	envPassword = "JIDO_PASSWORD" // the password of --user / JIDO_USER (an admin)
)

// readServeFile parses the YAML file at path.
func readServeFile(path string) (serveFile, error) {
	var f serveFile
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("--config: %w", err)
	}
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return f, fmt.Errorf("--config %s: %s", path, yaml.FormatError(err, false, false))
	}
	for i, u := range f.Users {
		if err := u.check(); err != nil {
			return f, fmt.Errorf("--config %s: users[%d]: %w", path, i, err)
		}
	}
	return f, nil
}

func (u serveUser) check() error {
	name := u.Name
	if name == "" {
		return errors.New("a user needs a name")
	}
	switch u.Role {
	case node.RoleAdmin, node.RoleOperator, node.RoleClient, node.RoleToolService:
	case "":
		return fmt.Errorf("user %q needs a role: one of %v", name, node.Roles())
	default:
		return fmt.Errorf("user %q: unknown role %q; want one of %v", name, u.Role, node.Roles())
	}
	switch {
	case u.Password != "" && u.NKey != "":
		return fmt.Errorf("user %q: give either a password or an nkey, not both", name)
	case u.Password == "" && u.NKey == "":
		return fmt.Errorf("user %q needs a password (a bcrypt hash) or an nkey (a public key)", name)
	case u.Password != "":
		if _, err := bcrypt.Cost([]byte(u.Password)); err != nil {
			return fmt.Errorf("user %q: the password must be a bcrypt hash, never the password itself (make one with 'nats server passwd' or 'htpasswd -bnBC 12 \"\" PASSWORD | tr -d :')", name)
		}
	case strings.HasPrefix(u.NKey, "S"):
		return fmt.Errorf("user %q: the nkey is a seed (a secret, starting with S): put its public key (U…, 'nats auth nkey show SEEDFILE') in the file and keep the seed with the client", name)
	}
	return nil
}

// applyServeFile sets every setting of f that no flag gave.
func applyServeFile(cfg *serveConfig, f serveFile, changed func(flag string) bool) {
	str := func(flag string, dst *string, v string) {
		if v != "" && !changed(flag) {
			*dst = v
		}
	}
	str("listen", &cfg.listen, f.Listen)
	str("nats-url", &cfg.natsURL, f.NATSURL)
	str("data-dir", &cfg.dataDir, f.DataDir)
	str("prefix", &cfg.prefix, f.Prefix)
	str("metrics", &cfg.metrics, f.Metrics)
	str("tlscert", &cfg.tls.Cert, f.TLS.Cert)
	str("tlskey", &cfg.tls.Key, f.TLS.Key)
	str("tlsca", &cfg.tls.CA, f.TLS.CA)
	if f.Insecure && !changed("insecure") {
		cfg.insecure = true
	}
	cfg.tls.VerifyClients = f.TLS.VerifyClients
	cfg.listenFromFile = f.Listen != ""
	for _, u := range f.Users {
		cfg.users = append(cfg.users, node.User{Name: u.Name, Password: u.Password, NKey: u.NKey, Role: u.Role})
	}
	if !changed("webhook-allow") {
		cfg.webhooks.Allow = f.Webhooks.Allow
	}
	if !changed("webhook-allow-private") {
		cfg.webhooks.AllowPrivate = f.Webhooks.AllowPrivate
	}
}

// applyServeEnv takes the secrets no flag gave from the environment.
func applyServeEnv(cfg *serveConfig, changed func(flag string) bool, getenv func(string) string) {
	if v := getenv(envToken); v != "" && !changed("token") {
		cfg.token = v
	}
	if v := getenv(envPassword); v != "" && !changed("password") {
		cfg.password = v
	}
	// A password, from the flag or the environment, is an admin's: named
	// by --user or JIDO_USER, else "admin". Left without a name it would
	// configure no user at all, and the server would take anyone.
	if cfg.password != "" && cfg.user == "" {
		cfg.user = getenv(envUser)
		if cfg.user == "" {
			cfg.user = node.RoleAdmin
		}
	}
}

// resolveServeConfig returns flags' configuration completed from the
// --config file and the environment: a flag wins over the environment,
// which wins over the file.
func resolveServeConfig(cmd *cobra.Command, flags *serveConfig, getenv func(string) string) (serveConfig, error) {
	cfg := *flags
	changed := cmd.Flags().Changed
	var file serveFile
	if cfg.configPath != "" {
		f, err := readServeFile(cfg.configPath)
		if err != nil {
			return cfg, err
		}
		applyServeFile(&cfg, f, changed)
		file = f
		if w := worldReadable(cfg.configPath, f); w != "" {
			cfg.warnings = append(cfg.warnings, w)
		}
	}
	applyServeEnv(&cfg, changed, getenv)
	if cfg.dataDir == "" {
		dir, note, err := defaultDataDir(getenv)
		if err != nil {
			return cfg, err
		}
		cfg.dataDir = dir
		if note != "" {
			cfg.notes = append(cfg.notes, note)
		} else {
			cfg.dataHome = true
		}
	}
	for _, u := range file.Users {
		if cfg.user != "" && u.Name == cfg.user {
			return cfg, fmt.Errorf("the user %q of --user or %s (the default name of %s's user is %q) is also a user of --config %s: rename one of them", cfg.user, envUser, envPassword, node.RoleAdmin, cfg.configPath)
		}
	}
	if err := resolveServeHTTP(&cfg, file.HTTP, changed, getenv); err != nil {
		return cfg, err
	}
	if err := resolveServeSecrets(&cfg, file, changed); err != nil {
		return cfg, err
	}
	if err := resolveServeMCP(&cfg, file.MCPRemotes, changed, getenv); err != nil {
		return cfg, err
	}
	if err := resolveServeSandbox(&cfg, file.Sandbox, changed); err != nil {
		return cfg, err
	}
	if err := resolveServeCheckpoints(&cfg, file.Checkpoints, changed); err != nil {
		return cfg, err
	}
	if err := resolveServeEmitStream(&cfg, file.EmitStream, changed); err != nil {
		return cfg, err
	}
	if err := resolveServeCluster(&cfg, file.Cluster, changed, getenv); err != nil {
		return cfg, err
	}
	cfg.secretFlags = secretsOnCommandLine(changed)
	if (changed("listen") || cfg.listenFromFile) && cfg.natsURL != "" {
		return cfg, errors.New("--listen and --nats-url (listen and nats_url in --config) exclude each other: listen configures the embedded server, --nats-url replaces it")
	}
	return cfg, nil
}

// secretsOnCommandLine names the flags given that carry a secret: anyone
// on the machine reads them with ps.
func secretsOnCommandLine(changed func(flag string) bool) []string {
	var out []string
	for _, f := range []string{"password", "token"} {
		if changed(f) {
			out = append(out, "--"+f)
		}
	}
	return out
}

// worldReadable warns when path, holding users' password hashes, may be
// read by every user of the machine: a bcrypt hash is what an attacker
// cracks offline. Like nats-server, serve starts anyway.
func worldReadable(path string, f serveFile) string {
	hashes := false
	for _, u := range f.Users {
		hashes = hashes || u.Password != ""
	}
	st, err := os.Stat(path)
	if !hashes || err != nil || st.Mode().Perm()&0o004 == 0 {
		return ""
	}
	return fmt.Sprintf("--config %s holds password hashes and every user of this machine may read it (mode %v): chmod 600 %s (or 640 with the group serve runs as)", path, st.Mode().Perm(), path)
}

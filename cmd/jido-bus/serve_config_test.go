package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jido.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveFlags parses args with serve's flags and returns the configuration
// serve would run with (file, environment and flags resolved).
func serveFlags(t *testing.T, env map[string]string, args ...string) (serveConfig, error) {
	t.Helper()
	cmd, cfg := newServeCmdConfig()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return resolveServeConfig(cmd, cfg, func(k string) string { return env[k] })
}

func TestServeConfigFile(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, `
listen: 0.0.0.0:4333
data_dir: /var/lib/jido
prefix: acme
metrics: 127.0.0.1:9464
users:
  - name: alice
    password: '`+string(hash)+`'
    role: admin
  - name: bot
    nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4
    role: client
tls:
  cert: /etc/jido/cert.pem
  key: /etc/jido/key.pem
  ca: /etc/jido/ca.pem
  verify_clients: true
webhooks:
  allow: ["https://hooks.example.com/**"]
  allow_private: ["10.0.0.0/8"]
`)
	cfg, err := serveFlags(t, nil, "--config", path, "--prefix", "flagwins")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.listen != "0.0.0.0:4333" || cfg.dataDir != "/var/lib/jido" || cfg.prefix != "flagwins" || cfg.metrics != "127.0.0.1:9464" {
		t.Fatalf("cfg = %+v", cfg)
	}
	if len(cfg.users) != 2 || cfg.users[0].Name != "alice" || cfg.users[1].Role != "client" || cfg.users[1].NKey == "" {
		t.Fatalf("users = %+v", cfg.users)
	}
	if cfg.tls.Cert != "/etc/jido/cert.pem" || !cfg.tls.VerifyClients || cfg.tls.CA != "/etc/jido/ca.pem" {
		t.Fatalf("tls = %+v", cfg.tls)
	}
	if len(cfg.webhooks.Allow) != 1 || cfg.webhooks.AllowPrivate[0] != "10.0.0.0/8" {
		t.Fatalf("webhooks = %+v", cfg.webhooks)
	}
}

func TestServeConfigFileErrors(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"unknown key", "listen: 127.0.0.1:4222\nlisen: 0.0.0.0:4222\n", []string{"lisen", "[2:"}},
		{"unknown nested key", "tls:\n  cert: a\n  verify: true\n", []string{"verify", "[3:"}},
		{"plain password", "users:\n  - {name: a, password: hunter2, role: admin}\n", []string{"bcrypt hash", "nats server passwd"}},
		{"no role", "users:\n  - {name: a, password: '" + string(hash) + "'}\n", []string{"needs a role"}},
		{"bad role", "users:\n  - {name: a, password: '" + string(hash) + "', role: root}\n", []string{`unknown role "root"`}},
		{"seed", "users:\n  - {name: a, nkey: SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4, role: client}\n", []string{"seed"}},
		{"not yaml", "listen: [\n", []string{"--config"}},
		{"listen and nats_url", "listen: 127.0.0.1:4000\nnats_url: nats://x:4222\n", []string{"exclude each other"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := serveFlags(t, nil, "--config", writeConfig(t, c.body))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := serveFlags(t, nil, "--config", filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestServeSecretsFromTheEnvironment(t *testing.T) {
	cfg, err := serveFlags(t, map[string]string{"JIDO_TOKEN": "envtoken"})
	if err != nil || cfg.token != "envtoken" || len(cfg.secretFlags) != 0 {
		t.Fatalf("JIDO_TOKEN: %+v %v", cfg, err)
	}
	cfg, err = serveFlags(t, map[string]string{"JIDO_TOKEN": "envtoken"}, "--token", "flagtoken")
	if err != nil || cfg.token != "flagtoken" || len(cfg.secretFlags) != 1 {
		t.Fatalf("--token over JIDO_TOKEN: %+v %v", cfg, err)
	}
	cfg, err = serveFlags(t, map[string]string{"JIDO_PASSWORD": "pw"})
	if err != nil || cfg.user != "admin" || cfg.password != "pw" {
		t.Fatalf("JIDO_PASSWORD: %+v %v", cfg, err)
	}
	cfg, err = serveFlags(t, map[string]string{"JIDO_PASSWORD": "pw", "JIDO_USER": "root"})
	if err != nil || cfg.user != "root" {
		t.Fatalf("JIDO_USER: %+v %v", cfg, err)
	}
	// --password alone names the same admin as JIDO_PASSWORD alone: it
	// used to configure no user, and the node took anyone.
	cfg, err = serveFlags(t, nil, "--password", "pw")
	if err != nil || cfg.user != "admin" || cfg.password != "pw" {
		t.Fatalf("--password alone: %+v %v", cfg, err)
	}
	cfg, err = serveFlags(t, map[string]string{"JIDO_USER": "root"}, "--password", "pw")
	if err != nil || cfg.user != "root" {
		t.Fatalf("--password with JIDO_USER: %+v %v", cfg, err)
	}
}

package main

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestServeConfigReadableByEveryoneWarns: the users' bcrypt hashes are
// what an attacker cracks offline; a config file holding them that every
// user of the machine may read is started anyway (as sshd does not, but
// nats-server does) with a warning that says how to fix it. A file only
// its owner reads, or one without password hashes, gives no warning.
func TestServeConfigReadableByEveryoneWarns(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	withUsers := "users:\n  - {name: alice, password: '" + string(hash) + "', role: admin}\n"
	for _, c := range []struct {
		body string
		mode os.FileMode
		warn bool
	}{
		{withUsers, 0o644, true},
		{withUsers, 0o640, false},
		{withUsers, 0o600, false},
		{"listen: 127.0.0.1:4222\n", 0o644, false},
	} {
		path := writeConfig(t, c.body)
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		cfg, err := serveFlags(t, nil, "--config", path)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(cfg.warnings, "\n")
		if c.warn != (strings.Contains(got, "chmod 600 "+path) && strings.Contains(got, "every user")) {
			t.Fatalf("mode %o, users %v: warnings %q", c.mode, strings.Contains(c.body, "users"), got)
		}
	}
}

// TestServeEnvUserCollidesWithConfigUser: JIDO_USER (or --user) naming a
// user of the config file used to fail deep in the server with
// `user "ops" is configured twice`, which names neither source; it now
// says which two settings collide.
func TestServeEnvUserCollidesWithConfigUser(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, "users:\n  - {name: ops, password: '"+string(hash)+"', role: client}\n")
	_, err = serveFlags(t, map[string]string{"JIDO_USER": "ops", "JIDO_PASSWORD": "secret"}, "--config", path)
	if err == nil || !strings.Contains(err.Error(), "JIDO_USER") || !strings.Contains(err.Error(), `"ops"`) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v; want it to name JIDO_USER, the user and the file", err)
	}
	// The default name "admin" collides the same way.
	path = writeConfig(t, "users:\n  - {name: admin, password: '"+string(hash)+"', role: admin}\n")
	if _, err = serveFlags(t, map[string]string{"JIDO_PASSWORD": "secret"}, "--config", path); err == nil || !strings.Contains(err.Error(), `"admin"`) {
		t.Fatalf("err = %v", err)
	}
}

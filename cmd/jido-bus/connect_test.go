package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/node"
)

// isolateNATSEnv clears the NATS CLI's variables and points its config
// directory at a fresh one, returned, so a test sees only its own.
func isolateNATSEnv(t *testing.T) string {
	t.Helper()
	for _, v := range []string{"NATS_URL", "NATS_USER", "NATS_PASSWORD", "NATS_TOKEN", "NATS_CREDS", "NATS_NKEY", "NATS_CERT", "NATS_KEY", "NATS_CA", "NATS_CONTEXT"} {
		t.Setenv(v, "")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	return filepath.Join(dir, "nats")
}

func writeNATSContext(t *testing.T, natsDir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(natsDir, "context"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(natsDir, "context", name+".json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// resolveWith parses args into a command's connFlags and resolves them.
func resolveWith(t *testing.T, args ...string) (connSettings, error) {
	t.Helper()
	var f connFlags
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	f.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return f.resolve()
}

func TestConnectionPrecedence(t *testing.T) {
	natsDir := isolateNATSEnv(t)
	writeNATSContext(t, natsDir, "prod", `{"url":"nats://prod:4222","user":"ctxuser","password":"ctxpw","description":"x"}`)
	writeNATSContext(t, natsDir, "dev", `{"url":"nats://dev:4222","token":"ctxtoken"}`)
	writeNATSContext(t, natsDir, "nsc", `{"nsc":"nsc://op/acc/user"}`)
	if err := os.WriteFile(filepath.Join(natsDir, "context.txt"), []byte("prod\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		want    string // url user password token
		wantErr string
	}{
		{name: "selected context", want: "nats://prod:4222 ctxuser ctxpw -"},
		{name: "NATS_CONTEXT over the selected one", env: map[string]string{"NATS_CONTEXT": "dev"}, want: "nats://dev:4222 - - ctxtoken"},
		{name: "--context over NATS_CONTEXT", env: map[string]string{"NATS_CONTEXT": "dev"}, args: []string{"--context", "prod"}, want: "nats://prod:4222 ctxuser ctxpw -"},
		{name: "NATS_URL over the context", env: map[string]string{"NATS_URL": "nats://env:1"}, want: "nats://env:1 ctxuser ctxpw -"},
		{name: "--server over NATS_URL", env: map[string]string{"NATS_URL": "nats://env:1"}, args: []string{"--server", "nats://flag:2"}, want: "nats://flag:2 ctxuser ctxpw -"},
		{name: "-s", args: []string{"-s", "nats://short:3"}, want: "nats://short:3 ctxuser ctxpw -"},
		{name: "--nats-url alias", args: []string{"--nats-url", "nats://alias:4"}, want: "nats://alias:4 ctxuser ctxpw -"},
		{name: "a token flag replaces the context's user", args: []string{"--token", "t0k"}, want: "nats://prod:4222 - - t0k"},
		{name: "NATS_TOKEN replaces the context's user", env: map[string]string{"NATS_TOKEN": "envtok"}, want: "nats://prod:4222 - - envtok"},
		{name: "--user with NATS_PASSWORD", env: map[string]string{"NATS_PASSWORD": "envpw"}, args: []string{"--user", "bob"}, want: "nats://prod:4222 bob envpw -"},
		{name: "--user and --token", args: []string{"--user", "bob", "--token", "t"}, wantErr: "conflicting credentials: user (from --user), token (from --token)"},
		{name: "no such context", args: []string{"--context", "nope"}, wantErr: `--context "nope": no such NATS context`},
		{name: "a context name that is a path", args: []string{"--context", "../prod"}, wantErr: "not a context name"},
		{name: "an nsc context", args: []string{"--context", "nsc"}, wantErr: "sets nsc, which jido-bus does not support"},
		{name: "a password without a user", env: map[string]string{"NATS_CONTEXT": "dev"}, args: []string{"--password", "pw", "--token", "t"}, want: "nats://dev:4222 - - t"},
		{name: "half a client certificate", args: []string{"--tlscert", "c.pem"}, wantErr: "give --tlscert and --tlskey"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			s, err := resolveWith(t, c.args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dash := func(v string) string {
				if v == "" {
					return "-"
				}
				return v
			}
			if got := fmt.Sprintf("%s %s %s %s", s.url, dash(s.user), dash(s.password), dash(s.token)); got != c.want {
				t.Errorf("resolved %q, want %q", got, c.want)
			}
		})
	}
}

func TestConnectionDefaultsWithoutContext(t *testing.T) {
	isolateNATSEnv(t)
	s, err := resolveWith(t)
	if err != nil || s.url != "nats://127.0.0.1:4222" || s.user != "" || s.token != "" {
		t.Fatalf("resolve = %+v, %v; want the default URL and no credentials", s, err)
	}
	t.Setenv("NATS_PASSWORD", "pw")
	if _, err := resolveWith(t); err == nil || !strings.Contains(err.Error(), "a password (from NATS_PASSWORD) needs a user") {
		t.Fatalf("a password alone: %v", err)
	}
}

func TestConnectRefusesANonPositiveTimeout(t *testing.T) {
	isolateNATSEnv(t)
	for _, d := range []string{"0s", "-1s"} {
		_, err := runRoot(t, "agent", "list", "-s", nobody, "--timeout", d)
		if err == nil || !strings.Contains(err.Error(), "--timeout "+d+": want a positive duration") {
			t.Errorf("--timeout %s: %v", d, err)
		}
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{errors.New("boom"), 1},
		{exitError{code: 2, err: errors.New("damaged")}, 2},
		{fmt.Errorf("agent state: %w", bus.Errorf(bus.ReasonNotFound, "no agent c9")), 3},
		{fmt.Errorf("x: %w", bus.Errorf(bus.ReasonUnavailable, "no node")), 4},
		{bus.Errorf(bus.ReasonForbidden, "no"), 5},
		{bus.Errorf(bus.ReasonInvalidRequest, "bad"), 1},
	}
	for _, c := range cases {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestAuthFailureIsNotAFallback: refused credentials are an error (exit 5),
// never a reason to open the local data directory.
func TestAuthFailureIsNotAFallback(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	isolateNATSEnv(t)
	n, err := node.Start(t.Context(), node.Config{DataDir: t.TempDir(), NATS: node.NATSConfig{Listen: "127.0.0.1:0", User: "alice", Password: "secret"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	for _, args := range [][]string{
		{"log", "streams"},
		{"conv", "ls"},
		{"agent", "list"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			_, err := runRoot(t, append(args, "-s", n.URL(), "--user", "alice", "--password", "wrong")...)
			if err == nil || !strings.Contains(err.Error(), "authorization failed at "+n.URL()+" with user alice (from --user)") {
				t.Fatalf("err = %v, want an authorization failure", err)
			}
			if code := exitCode(err); code != exitForbidden {
				t.Errorf("exit code %d, want %d", code, exitForbidden)
			}
		})
	}
	t.Setenv("NATS_PASSWORD", "secret")
	if _, err := runRoot(t, "agent", "list", "-s", n.URL(), "--user", "alice"); err != nil {
		t.Fatalf("with the password from NATS_PASSWORD: %v", err)
	}
}

// TestPermissionViolationIsForbidden: a user whose permissions do not allow
// a request is told so at once (exit 5), not after --timeout.
func TestPermissionViolationIsForbidden(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	isolateNATSEnv(t)
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, Users: []*server.User{
		{Username: "node", Password: "n"},
		{Username: "client", Password: "c", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{"jido.api.agent.state", "jido.api.ping"}},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	n, err := node.Start(t.Context(), node.Config{DataDir: t.TempDir(), NATS: node.NATSConfig{URL: srv.ClientURL(), User: "node", Password: "n", NoJetStream: true}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	t.Setenv("NATS_PASSWORD", "c")
	// --timeout far beyond the test's own deadline: only the denial can
	// end the request in time.
	_, err = runRootWithin(t, 20*time.Second, "agent", "stop", "c1", "-s", srv.ClientURL(), "--user", "client", "--timeout", "1h")
	if err == nil || !strings.Contains(err.Error(), "user client may not publish to jido.api.agent.stop: its role does not allow agent.stop") {
		t.Fatalf("err = %v, want forbidden", err)
	}
	if code := exitCode(err); code != exitForbidden {
		t.Errorf("exit code %d, want %d", code, exitForbidden)
	}
	// What the user may do still works, and a missing agent is exit 3.
	_, err = runRoot(t, "agent", "state", "nope", "-s", srv.ClientURL(), "--user", "client")
	if code := exitCode(err); code != exitNotFound {
		t.Errorf("agent state nope: %v, exit code %d, want %d", err, code, exitNotFound)
	}
}

// TestUnresolvableServerIsUnreachable: a server name that does not
// resolve is a server that is not there (exit 4, the URL named), like a
// refused connection, not a generic error.
func TestUnresolvableServerIsUnreachable(t *testing.T) {
	isolateNATSEnv(t)
	t.Setenv("NATS_URL", "nats://no-such-host.invalid:4222")
	_, err := runRoot(t, "agent", "list", "--timeout", "2s")
	if code := exitCode(err); code != exitUnreachable || !strings.Contains(fmt.Sprint(err), "no NATS server at nats://no-such-host.invalid:4222") {
		t.Fatalf("err = %v (exit %d), want exit %d naming the server", err, code, exitUnreachable)
	}
}

package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/node"
)

// TestClientRoleNeedsNoInboxFlag: a user of the client or operator role
// may subscribe to its own inbox only (_INBOX_<user>.>); the CLI uses that
// inbox whenever it connects as a named user, so `agent list --user app`
// works without the --inbox-prefix the NATS CLI needs, and --inbox-prefix
// still wins when given (an nkey user, whose name the CLI cannot know).
func TestClientRoleNeedsNoInboxFlag(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	isolateNATSEnv(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(t.Context(), node.Config{DataDir: t.TempDir(), NoSync: true, NATS: node.NATSConfig{
		Listen: "127.0.0.1:0", NoJetStream: true,
		Users: []node.User{{Name: "app", Password: string(hash), Role: node.RoleClient}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	url := n.URL()
	t.Setenv("NATS_PASSWORD", "pw")
	if out, err := runRoot(t, "agent", "list", "-s", url, "--user", "app", "--timeout", "5s"); err != nil {
		t.Fatalf("agent list as a client: %v\n%s", err, out)
	}
	_, err = runRoot(t, "agent", "list", "-s", url, "--user", "app", "--timeout", "5s", "--inbox-prefix", "_INBOX")
	if err == nil || !strings.Contains(err.Error(), "inbox") || exitCode(err) != exitForbidden {
		t.Fatalf("agent list with someone else's inbox: %v (exit %d), want forbidden naming the inbox", err, exitCode(err))
	}
}

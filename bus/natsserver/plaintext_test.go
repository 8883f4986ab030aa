package natsserver_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestNoPlaintextPasswordsInTheServer: the server keeps no password in
// clear — neither the in-process user's secret nor an admin password
// given from the environment (User/Password) — so nats-server has nothing
// to warn about ("Plaintext passwords detected"), which an operator who
// configured only bcrypt hashes would otherwise read as their mistake.
func TestNoPlaintextPasswordsInTheServer(t *testing.T) {
	var out testkit.Buffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.User, o.Password = "admin", "from-the-env"
		o.Users = []natsserver.User{{Name: "app", Password: hash(t, "app-pw")}}
		o.Logger = log
	})
	natstest.Connect(t, srv, nats.UserInfo("admin", "from-the-env"))
	natstest.Connect(t, srv, nats.UserInfo("app", "app-pw"))
	inproc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	inproc.Close()
	if strings.Contains(out.String(), "Plaintext passwords detected") {
		t.Fatalf("the server warns of plaintext passwords:\n%s", out.String())
	}
}

package natsserver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// violations collects what Options.OnViolation reports.
type violations struct {
	mu  sync.Mutex
	got []natsserver.Violation
	ch  chan struct{}
}

func newViolations() *violations { return &violations{ch: make(chan struct{}, 64)} }

func (v *violations) add(x natsserver.Violation) {
	v.mu.Lock()
	v.got = append(v.got, x)
	v.mu.Unlock()
	v.ch <- struct{}{}
}

func (v *violations) next(t *testing.T) natsserver.Violation {
	t.Helper()
	select {
	case <-v.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no violation reported")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.got[len(v.got)-1]
}

func hash(t *testing.T, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// asyncErrs returns an option that sends the connection's asynchronous
// errors (permission violations) to the returned channel.
func asyncErrs() (nats.Option, chan error) {
	ch := make(chan error, 16)
	return nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { ch <- err }), ch
}

func TestUsersWithPermissions(t *testing.T) {
	v := newViolations()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	limited := &natsserver.Permissions{
		PublishAllow:   []string{"ok.>"},
		SubscribeAllow: []string{"_INBOX_bob.>", "ok.>"},
	}
	adminHash := hash(t, "adminpw")
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.Users = []natsserver.User{
			{Name: "admin", Password: adminHash},
			{Name: "bob", Password: hash(t, "bobpw"), Permissions: limited},
			{Name: "kim", NKey: pub, Permissions: limited},
		}
		o.OnViolation = v.add
	})

	// bcrypt: the right password connects, a wrong one or the hash itself does not.
	natstest.Connect(t, srv, nats.UserInfo("admin", "adminpw"))
	for _, wrong := range []nats.Option{nats.UserInfo("admin", "nope"), nats.UserInfo("admin", adminHash), nats.UserInfo("bob", "adminpw")} {
		if nc, err := nats.Connect(srv.ClientURL(), wrong); err == nil {
			nc.Close()
			t.Fatal("connected with wrong credentials")
		}
	}
	// nkeys.
	nkeyOpt, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	errOpt, errs := asyncErrs()
	kim := natstest.Connect(t, srv, nkeyOpt, errOpt, nats.CustomInboxPrefix("_INBOX_bob"))
	if err := kim.Publish("not.allowed", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if got := v.next(t); got.Subject != "not.allowed" || got.User != "kim" {
		t.Fatalf("violation = %+v, want not.allowed by kim", got)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("async error = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client was not told of the violation")
	}

	// A password user: allowed subjects work, others are reported.
	errOpt, errs = asyncErrs()
	bob := natstest.Connect(t, srv, nats.UserInfo("bob", "bobpw"), errOpt, nats.CustomInboxPrefix("_INBOX_bob"))
	sub, err := bob.SubscribeSync("ok.x")
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.Publish("ok.x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("allowed publish not delivered: %v", err)
	}
	if _, err := bob.Request("jido.api.log.truncate", []byte("{}"), time.Second); err == nil {
		t.Fatal("a request to a forbidden subject was answered")
	}
	if got := v.next(t); got.Subject != "jido.api.log.truncate" || got.User != "bob" || !strings.Contains(got.Client, "bob") {
		t.Fatalf("violation = %+v", got)
	}
	<-errs
	// Another user's inbox cannot be read.
	if _, err := bob.SubscribeSync("_INBOX.x"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("async error = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscribing to another inbox was not refused")
	}

	// The server's own in-process connection may do everything.
	inproc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer inproc.Close()
	if err := inproc.Publish("anything.at.all", nil); err != nil {
		t.Fatal(err)
	}
	if err := inproc.Flush(); err != nil {
		t.Fatal(err)
	}
	if rtt, err := inproc.RTT(); err != nil || rtt < 0 {
		t.Fatalf("in-process connection: %v", err)
	}
}

func TestUsersRejected(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	for _, c := range []struct {
		name string
		o    natsserver.Options
		want string
	}{
		{"token and users", natsserver.Options{Token: "t", Users: []natsserver.User{{Name: "a", Password: "$2a$x"}}}, "token"},
		{"user flag and users with one name", natsserver.Options{User: "a", Password: "p", Users: []natsserver.User{{Name: "a", Password: "$2a$x"}}}, "twice"},
		{"no credential", natsserver.Options{Users: []natsserver.User{{Name: "a"}}}, "neither a password nor an nkey"},
		{"both credentials", natsserver.Options{Users: []natsserver.User{{Name: "a", Password: "p", NKey: pub}}}, "either"},
		{"bad name", natsserver.Options{Users: []natsserver.User{{Name: "a.b", Password: "p"}}}, "name"},
		{"reserved name", natsserver.Options{Users: []natsserver.User{{Name: "_jido", Password: "p"}}}, "name"},
		{"duplicate", natsserver.Options{Users: []natsserver.User{{Name: "a", Password: "p"}, {Name: "a", Password: "q"}}}, "twice"},
		{"bad nkey", natsserver.Options{Users: []natsserver.User{{Name: "a", NKey: "SUAXYZ"}}}, "nkey"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Port = natsserver.RandomPort
			c.o.NoJetStream = true
			s, err := natsserver.Start(c.o)
			if err == nil {
				_ = s.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func bcryptHash(t *testing.T, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// startWithUsers starts a node under prefix with one user of each role,
// named after it, password "<role>pw".
func startWithUsers(t *testing.T, prefix string) *Node {
	t.Helper()
	var users []User
	for _, r := range Roles() {
		users = append(users, User{Name: r, Password: bcryptHash(t, r+"pw"), Role: r})
	}
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), Prefix: prefix, NoSync: true, MetricsAddr: "127.0.0.1:0",
		NATS: NATSConfig{Listen: "127.0.0.1:0", Users: users}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	return n
}

func connectAs(t *testing.T, n *Node, role string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(n.URL(), nats.UserInfo(role, role+"pw"), nats.CustomInboxPrefix(InboxPrefix(role)),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestRoles: each role's requests on every kind of subject the node
// serves are answered or refused by the server, as the role says; every
// refusal is a dead letter of reason forbidden naming the user and the
// subject, and is counted.
func TestRoles(t *testing.T) {
	const p = "acme.bus" // the permissions follow the prefix
	n := startWithUsers(t, p)
	if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	// Which roles may publish each subject (a request to it is answered).
	cases := []struct {
		subject string
		body    string
		allowed string // the least role allowed; "" none
	}{
		{p + ".api.ping", "", "client"},
		{p + ".agent.c1.counter.increment", `{"by":1}`, "client"},
		{p + ".api.agent.call", `{"id":"c1","type":"counter.increment","data":{"by":1}}`, "client"},
		{p + ".api.agent.state", `{"id":"c1"}`, "client"},
		{p + ".api.agent.list", `{}`, "client"},
		{p + ".api.conv.ls", `{}`, "client"},
		{p + ".api.log.emits", `{"stream":"agent/c1"}`, "client"},
		{p + ".api.conv.cancel", `{"conv":"p/none"}`, "client"},
		{p + ".api.conv.approve", `{"conv":"p/none","call_id":"k","decision":"deny"}`, "client"},
		{p + ".api.agent.start", `{"type":"counter"}`, "operator"},
		{p + ".api.agent.stop", `{"id":"nosuch"}`, "operator"},
		{p + ".api.log.streams", `{}`, "operator"},
		{p + ".api.log.show", `{"stream":"agent/c1"}`, "operator"},
		{p + ".api.projection.rebuild", `{"name":"nosuch"}`, "operator"},
		{"$JS.API.INFO", "", "operator"},
		{p + ".api.log.truncate", `{"stream":"agent/c1","before":1,"dry_run":true}`, "admin"},
		{p + ".api.log.import", `{"stream":"x","events":[]}`, "admin"},
		{"$JS.API.STREAM.CREATE.EVIL", `{"name":"EVIL","subjects":["evil.>"]}`, "admin"},
		{"jido.api.ping", "", "admin"}, // another prefix: nothing there
	}
	rank := map[string]int{RoleToolService: -1, "client": 0, "operator": 1, "admin": 2, "": 3} // a tool service may none of these
	// A refused request is dropped by the server, which tells the client
	// asynchronously: the request itself times out. What was refused is
	// checked exactly below, through the dead letters.
	refusals := 0
	for _, role := range Roles() {
		nc := connectAs(t, n, role)
		for _, c := range cases {
			allowed := rank[role] >= rank[c.allowed]
			if c.subject == "jido.api.ping" {
				// nobody answers there: only the refusals count
				_, _ = nc.Request(c.subject, []byte(c.body), 200*time.Millisecond)
				if role != RoleAdmin {
					refusals++
				}
				continue
			}
			if !allowed {
				refusals++
				if _, err := nc.Request(c.subject, []byte(c.body), 200*time.Millisecond); err == nil {
					t.Errorf("%s → %s answered, want it refused", role, c.subject)
				}
				continue
			}
			if _, err := nc.Request(c.subject, []byte(c.body), 5*time.Second); err != nil {
				t.Errorf("%s → %s: %v, want an answer", role, c.subject, err)
			}
		}
	}
	// Inboxes: a client cannot read the default inbox or another's.
	cl := connectAs(t, n, RoleClient)
	for _, subj := range []string{"_INBOX.>", InboxPrefix(RoleOperator) + ".>", p + ".dlq.>"} {
		errs := make(chan error, 1)
		nc, err := nats.Connect(n.URL(), nats.UserInfo("client", "clientpw"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errs:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("client subscribing %s: %v", subj, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("client subscribed to %s", subj)
		}
		nc.Close()
	}
	_ = cl
	// Each refused subscription is a dead letter too.
	refusals += 3

	// Every refused publish is a dead letter: forbidden, subject, user.
	var letters []string
	testkit.Eventually(t, fmt.Sprintf("%d forbidden dead letters", refusals), func() bool {
		letters = letters[:0]
		for e, err := range n.Log().ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			// Only the refusals by permission: an admin's request the API
			// cannot serve is a dead letter of its own reason.
			if strings.Contains(string(e.Event.Data()), `"reason":"forbidden"`) {
				letters = append(letters, string(e.Event.Data()))
			}
		}
		return len(letters) >= refusals
	})
	if len(letters) != refusals {
		t.Fatalf("%d dead letters, want %d: %v", len(letters), refusals, letters)
	}
	found := false
	for _, l := range letters {
		var d struct{ Reason, Error, Subject string }
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		if d.Reason != bus.ReasonForbidden {
			t.Fatalf("dead letter %s", l)
		}
		if d.Subject == p+".api.log.truncate" && strings.Contains(d.Error, "user client") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no dead letter of the client's truncate: %v", letters)
	}
	if body := metricsBody(t, n); !strings.Contains(body, `jido_signals_refused_total{reason="forbidden"} `+itoa(refusals)) {
		t.Fatalf("metrics do not count %d forbidden:\n%s", refusals, body)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestOwnStreamsForbidden: even an admin's request cannot truncate or
// import into runtime/*: the reply is forbidden and a dead letter.
func TestOwnStreamsForbidden(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	c := logapi.Client{NC: n.Conn(), Subjects: n.subjects, Timeout: 10 * time.Second}
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	before, err := n.Log().Stream(runtime.IndexStream)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Truncate(ctx, logapi.TruncateRequest{Stream: runtime.IndexStream, Before: 5})
	if bus.ErrorType(err) != bus.ReasonForbidden {
		t.Fatalf("truncate runtime/agents: %v, want forbidden", err)
	}
	ev, _ := json.Marshal(map[string]string{"specversion": "1.0", "id": "x", "source": "evil", "type": "runtime.agent.started"})
	_, err = c.Import(ctx, logapi.ImportRequest{Stream: runtime.IndexStream, Events: []json.RawMessage{ev}})
	if bus.ErrorType(err) != bus.ReasonForbidden {
		t.Fatalf("import into runtime/agents: %v, want forbidden", err)
	}
	if info, err := n.Log().Stream(runtime.IndexStream); err != nil || info != before {
		t.Fatalf("runtime/agents is %+v (%v) after the truncation and the import, was %+v", info, err, before)
	}
	testkit.EventuallyNil(t, "two dead letters", func() error {
		info, err := n.Log().Stream(DeadLetterStream)
		if err == nil && info.Count != 2 {
			err = fmt.Errorf("dead letters: %+v", info)
		}
		return err
	})
}

// TestProtectedMode: without authentication the embedded server listens
// on loopback only; elsewhere the start is refused with what to do,
// unless Insecure, which ping reports.
func TestProtectedMode(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "[::]:0", ":0"} {
		n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: NATSConfig{Listen: listen}})
		if err == nil {
			n.Shutdown(context.Background())
			t.Fatalf("%s without auth started", listen)
		}
		if !errors.Is(err, ErrUnprotected) || !strings.Contains(err.Error(), "--config") || !strings.Contains(err.Error(), "JIDO_TOKEN") {
			t.Fatalf("%s: %v", listen, err)
		}
	}
	for _, nc := range []NATSConfig{
		{Listen: "0.0.0.0:0", Token: "s3cret"},
		{Listen: "0.0.0.0:0", Users: []User{{Name: "a", Password: bcryptHash(t, "pw"), Role: RoleAdmin}}},
		{Listen: "localhost:0"},
	} {
		n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: nc})
		if err != nil {
			t.Fatalf("%+v: %v", nc, err)
		}
		var ping map[string]any
		if r, err := n.ping(context.Background(), nil); err != nil {
			t.Fatal(err)
		} else {
			b, _ := json.Marshal(r)
			_ = json.Unmarshal(b, &ping)
		}
		if ping["insecure"] != nil {
			t.Fatalf("ping of a protected node: %v", ping)
		}
		n.Shutdown(context.Background())
	}
	// A password without a user configures nobody: refused, on loopback
	// too, rather than a server that takes anyone.
	for _, nc := range []NATSConfig{{Listen: "127.0.0.1:0", Password: "pw"}, {Listen: "0.0.0.0:0", Password: "pw"}} {
		n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: nc})
		if err == nil {
			n.Shutdown(context.Background())
			t.Fatalf("%+v started", nc)
		}
		if !strings.Contains(err.Error(), "--user") {
			t.Fatalf("%+v: %v", nc, err)
		}
	}
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: NATSConfig{Listen: "0.0.0.0:0", Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m, err := nc.Request("jido.api.ping", nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Data), `"insecure":true`) || !strings.Contains(string(m.Data), "INSECURE") {
		t.Fatalf("ping = %s", m.Data)
	}
}

// TestTLSToNATSURL: the node connects to a TLS server with its CA (and a
// client certificate when the server wants one), and says what is wrong
// without them.
func TestTLSToNATSURL(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1")
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.TLSCert, o.TLSKey, o.TLSCA, o.TLSVerify = pki.ServerCert, pki.ServerKey, pki.CA, true
	})
	_, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: NATSConfig{URL: srv.ClientURL()}})
	if err == nil || !strings.Contains(err.Error(), "--tlsca") {
		t.Fatalf("start without the CA: %v", err)
	}
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: NATSConfig{URL: srv.ClientURL(),
		TLS: TLSFiles{CA: pki.CA, Cert: pki.ClientCert, Key: pki.ClientKey}}})
	if err != nil {
		t.Fatal(err)
	}
	n.Shutdown(context.Background())
}

// TestSecretsInClearWarned: a password or token crosses the network as a
// client connects; on a non-loopback address without TLS the node says so
// once at start. With TLS, on loopback, or with nkeys only, it does not.
func TestSecretsInClearWarned(t *testing.T) {
	cases := []struct {
		nc   NATSConfig
		warn bool
	}{
		{NATSConfig{Listen: "0.0.0.0:0", Token: "s3cret"}, true},
		{NATSConfig{Listen: "0.0.0.0:0", Users: []User{{Name: "a", Password: bcryptHash(t, "pw"), Role: RoleAdmin}}}, true},
		{NATSConfig{Listen: "127.0.0.1:0", Token: "s3cret"}, false},
		{NATSConfig{Listen: "0.0.0.0:0", Users: []User{{Name: "a", NKey: testNKey(t), Role: RoleAdmin}}}, false},
	}
	for _, tc := range cases {
		var buf testkit.Buffer
		n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: tc.nc, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
		if err != nil {
			t.Fatalf("%+v: %v", tc.nc, err)
		}
		n.Shutdown(context.Background())
		if got := strings.Contains(buf.String(), "secrets travel in clear"); got != tc.warn {
			t.Errorf("%+v: warned %v, want %v\n%s", tc.nc, got, tc.warn, buf.String())
		}
	}
}

// testNKey returns a new user nkey's public key.
func testNKey(t *testing.T) string {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

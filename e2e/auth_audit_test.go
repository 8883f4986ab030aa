package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The attack audit of issue 12's permission model, through the binary.

// TestForgedReplySubjectIsRefused: a client may not publish on an agent's
// emit subject, but NATS lets it name any reply subject; the node answers
// with its own rights, so a call with the reply subject
// jido.emit.c1.<type> would have the node forge what c1 emits to every
// subscriber (and $JS.API.STREAM.PURGE.<s> would ask JetStream to purge a
// stream for the client). Such a request is refused forbidden: not
// handled (the counter is unchanged), not answered there, a dead letter
// naming the reply subject.
func TestForgedReplySubjectIsRefused(t *testing.T) {
	node := startSecured(t)
	admin := func(args ...string) string {
		t.Helper()
		out, err := natsAs(t, node, "boss", adminPW, args...)
		if err != nil {
			t.Fatalf("nats %v as admin: %v\n%s", args, err, out)
		}
		return out
	}
	if out := admin("req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`); !strings.Contains(out, `"ok":true`) {
		t.Fatalf("admin start: %s", out)
	}
	emits, _ := node.StartNATS(t, "--user", "boss", "--password", adminPW, "sub", "jido.emit.c1.>")
	testkit.Eventually(t, "the emit subscription", func() bool { return strings.Contains(emits.String(), "Subscribing") })
	for _, c := range []struct{ subject, body, reply string }{
		{"jido.api.agent.call", `{"id":"c1","type":"counter.increment","data":{"by":5}}`, "jido.emit.c1.counter.changed"},
		{"jido.agent.c1.counter.increment", `{"by":7}`, "jido.emit.c1.forged"},
		{"jido.api.ping", ``, "$JS.API.STREAM.PURGE.MINE"},
		{"jido.api.agent.state", `{"id":"c1"}`, "orders.created"},
	} {
		out, err := natsAs(t, node, "app", clientPW, "pub", "--reply", c.reply, c.subject, c.body)
		if err != nil {
			t.Fatalf("client pub %s --reply %s: %v\n%s", c.subject, c.reply, err, out)
		}
		testkit.Eventually(t, "the dead letter of the reply "+c.reply, func() bool {
			out, _ := natsAs(t, node, "boss", adminPW, "req", "--raw", "jido.api.log.show", `{"stream":"dlq"}`)
			return strings.Contains(out, `reply subject \"`+c.reply+`\"`) || strings.Contains(out, `reply subject \u0022`+c.reply)
		})
	}
	if out := admin("req", "--raw", "jido.api.agent.state", `{"id":"c1"}`); !strings.Contains(out, `"count":0`) {
		t.Fatalf("a request with a forged reply subject was handled: %s", out)
	}
	// A genuine call (its own inbox) goes through, and the emit watcher
	// sees its counter.changed and nothing forged before it.
	if out, err := natsAs(t, node, "app", clientPW, "req", "--raw", "jido.api.agent.call", `{"id":"c1","type":"counter.increment","data":{"by":1}}`); err != nil || !strings.Contains(out, `"count":1`) {
		t.Fatalf("client call: %v\n%s", err, out)
	}
	testkit.Eventually(t, "the genuine emit", func() bool { return strings.Contains(emits.String(), `{"count":1}`) })
	if got := emits.String(); strings.Contains(got, "forged") || strings.Contains(got, `"ok":`) {
		t.Fatalf("a reply was published on an emit subject:\n%s", got)
	}
}

// TestForgedRuntimeSignalsAreRefused: a client may publish on
// jido.agent.<id>.<type>, but not types only the runtime produces. A
// forged jido.agent.stopped used to be committed to the agent's stream,
// and the agent then failed at the next start ("stops the incarnation
// the index lists as running"): one publish broke any agent for good.
// Now it is refused forbidden (the NATS CLI's reply says so), a dead
// letter, and the agent comes back running after a restart.
func TestForgedRuntimeSignalsAreRefused(t *testing.T) {
	dir := t.TempDir()
	config := writeFile(t, "jido.yaml", `
users:
  - name: app
    password: '`+bcryptHash(t, clientPW)+`'
    role: client
  - name: boss
    password: '`+bcryptHash(t, adminPW)+`'
    role: admin
`)
	node := StartNode(t, tools, dir, "--config", config)
	admin := func(node *Node, args ...string) string {
		t.Helper()
		out, err := natsAs(t, node, "boss", adminPW, args...)
		if err != nil {
			t.Fatalf("nats %v as admin: %v\n%s", args, err, out)
		}
		return out
	}
	if out := admin(node, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`); !strings.Contains(out, `"ok":true`) {
		t.Fatalf("admin start: %s", out)
	}
	for _, c := range []struct{ subject, body string }{
		{"jido.agent.c1.jido.agent.stopped", `{"reason":"forged"}`},
		{"jido.agent.c1.jido.agent.instruction.result", `{"result_action":"increment","result":{"by":100}}`},
		{"jido.api.agent.cast", `{"id":"c1","type":"jido.agent.child.exit","data":{"tag":"x","id":"c1/x","reason":"forged"}}`},
		{"jido.signal.jido.cron_tick", `{"job_id":"j"}`},
	} {
		out, err := natsAs(t, node, "app", clientPW, "req", "--raw", c.subject, c.body)
		if err != nil || !strings.Contains(out, `"type":"forbidden"`) {
			t.Fatalf("client req %s: %v\n%s", c.subject, err, out)
		}
	}
	testkit.Eventually(t, "the dead letters", func() bool {
		out, _ := natsAs(t, node, "boss", adminPW, "req", "--raw", "jido.api.log.show", `{"stream":"dlq"}`)
		return strings.Count(out, "a signal type of the runtime") >= 4
	})
	if err := node.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	node = StartNode(t, tools, dir, "--config", config)
	if out := admin(node, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`); !strings.Contains(out, `"status":"running"`) || !strings.Contains(out, `"version":0`) {
		t.Fatalf("c1 after the forged signals and a restart: %s", out)
	}
}

// TestOperatorRoleThroughNATSCLI: the operator role had no end-to-end
// proof. An operator controls agents, reads the log and the dead letters
// and JetStream's state; it may not truncate or import, nor create,
// purge or delete JetStream streams, nor read everything (">"). Each
// refused publish is a dead letter naming the operator, and the admin's
// stream is untouched.
func TestOperatorRoleThroughNATSCLI(t *testing.T) {
	const opPW = "operator-secret-1"
	config := writeFile(t, "jido.yaml", `
users:
  - name: oncall
    password: '`+bcryptHash(t, opPW)+`'
    role: operator
  - name: boss
    password: '`+bcryptHash(t, adminPW)+`'
    role: admin
`)
	node := StartNode(t, tools, t.TempDir(), "--config", config)
	admin := func(args ...string) string {
		t.Helper()
		out, err := natsAs(t, node, "boss", adminPW, args...)
		if err != nil {
			t.Fatalf("nats %v as admin: %v\n%s", args, err, out)
		}
		return out
	}
	op := func(args ...string) (string, error) { return natsAs(t, node, "oncall", opPW, args...) }
	admin("stream", "add", "KEEP", "--subjects", "keep.>", "--defaults")
	admin("pub", "keep.a", "precious")
	dlq, _ := node.StartNATS(t, "--user", "oncall", "--password", opPW, "--inbox-prefix", "_INBOX_oncall", "sub", "jido.dlq.>")
	testkit.Eventually(t, "the operator's dead-letter subscription", func() bool { return strings.Contains(dlq.String(), "Subscribing") })
	for _, c := range []struct{ subject, body, want string }{
		{"jido.api.agent.start", `{"type":"counter","id":"c1"}`, `"status":"running"`},
		{"jido.api.agent.stop", `{"id":"c1"}`, `"ok":true`},
		{"jido.api.log.streams", `{}`, `"agent/c1"`},
		{"jido.api.log.show", `{"stream":"agent/c1"}`, `"seq":1,`},
		{"jido.api.log.verify", `{}`, `"ok":true`},
	} {
		if out, err := op("req", "--raw", c.subject, c.body); err != nil || !strings.Contains(out, c.want) {
			t.Fatalf("operator req %s: %v\n%s", c.subject, err, out)
		}
	}
	if out, err := op("stream", "ls"); err != nil || !strings.Contains(out, "KEEP") {
		t.Fatalf("operator stream ls: %v\n%s", err, out)
	}
	refused := []string{"jido.api.log.truncate", "jido.api.log.import", "$JS.API.STREAM.PURGE.KEEP", "$JS.API.STREAM.DELETE.KEEP", "$JS.API.STREAM.CREATE.EVIL", "jido.emit.c1.forged", "jido.dlq.forged"}
	for _, subject := range refused {
		out, _ := op("req", "--raw", subject, `{}`)
		if !strings.Contains(out, `Permissions Violation for Publish to "`+subject+`"`) {
			t.Fatalf("operator req %s:\n%s", subject, out)
		}
	}
	if out, _ := op("sub", ">", "--count", "1"); !strings.Contains(out, `Permissions Violation for Subscription to ">"`) {
		t.Fatalf("operator sub >:\n%s", out)
	}
	testkit.Eventually(t, "a dead letter for each refused publish, naming the operator", func() bool {
		got := dlq.String()
		for _, subject := range refused {
			if !strings.Contains(got, "user oncall may not publish to "+subject) {
				return false
			}
		}
		return true
	})
	if out := admin("stream", "info", "KEEP", "--json"); !strings.Contains(out, `"messages": 1`) {
		t.Fatalf("KEEP after the operator's attempts:\n%s", out)
	}
}

// TestServeRefusesUnsafeSettings: every form of "all interfaces" without
// auth is refused by protected mode, and every unsafe or ambiguous user
// entry in --config stops the start with exit 1 and a message naming the
// fix; localhost is loopback.
func TestServeRefusesUnsafeSettings(t *testing.T) {
	hash := bcryptHash(t, "pw")
	serve := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, tools.JidoBus, append([]string{"serve", "--data-dir", t.TempDir()}, args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("serve %v: %v (want it to refuse)\n%s", args, err, out)
		}
		return string(out), ee.ExitCode()
	}
	for _, listen := range []string{":0", "[::]:0", "0:0"} {
		if out, code := serve("--listen", listen); code != 1 || !strings.Contains(out, "protected mode") || !strings.Contains(out, "--insecure") {
			t.Fatalf("serve --listen %s without auth: exit %d\n%s", listen, code, out)
		}
	}
	for _, c := range []struct{ users, want string }{
		{"{name: a, password: plain, role: admin}", "bcrypt hash"},
		{"{name: a, nkey: SUAKYRHVIOREXV7EUZTBHUHL7NUMHPMAS7QMDU3GTIUWEI5LDNOXD43IZY, role: admin}", "seed"},
		{"{name: a, password: '" + hash + "', role: root}", `unknown role "root"`},
		{"{name: a, password: '" + hash + "'}", "needs a role"},
		{"{name: a, password: '', role: client}", "needs a password"},
		{"{name: _jido_node, password: '" + hash + "', role: client}", "not starting with '_'"},
		{"{name: a, password: '" + hash + "', role: admin}\n  - {name: a, password: '" + hash + "', role: client}", "configured twice"},
	} {
		config := writeFile(t, "jido.yaml", "users:\n  - "+c.users+"\n")
		if out, code := serve("--listen", "127.0.0.1:0", "--config", config); code != 1 || !strings.Contains(out, c.want) {
			t.Fatalf("users %s: exit %d, want 1 saying %q\n%s", c.users, code, c.want, out)
		}
	}
	node := StartNode(t, tools, t.TempDir(), "--listen", "localhost:0")
	if out := node.NATS(t, "req", "--raw", "jido.api.ping", ""); !strings.Contains(out, `"ok":true`) || strings.Contains(out, `"insecure":true`) {
		t.Fatalf("ping on localhost: %s", out)
	}
}

// TestRefusedSubscriptionsAreDeadLetters: a client running `nats sub` on
// the dead letters or on everything is refused by the server, and the
// attempt is a dead letter naming the client, as refused publishes are.
func TestRefusedSubscriptionsAreDeadLetters(t *testing.T) {
	node := startSecured(t)
	for _, subject := range []string{"jido.dlq.>", ">"} {
		if out, _ := natsAs(t, node, "app", clientPW, "sub", subject, "--count", "1"); !strings.Contains(out, `Permissions Violation for Subscription to "`+subject+`"`) {
			t.Fatalf("client sub %s:\n%s", subject, out)
		}
	}
	testkit.Eventually(t, "the dead letters of the refused subscriptions", func() bool {
		out, _ := natsAs(t, node, "boss", adminPW, "req", "--raw", "jido.api.log.show", `{"stream":"dlq"}`)
		out = strings.ReplaceAll(out, `\u003e`, ">") // JSON may escape '>'
		return strings.Contains(out, "user app may not subscribe to jido.dlq.> ") && strings.Contains(out, "user app may not subscribe to > ")
	})
}

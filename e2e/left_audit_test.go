package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// The audit of the CLI's client commands for the issue "Operators": what a
// user with too small a role, or without the TLS files, is told.

// TestLeftAuditForbiddenNamesTheVerb: a client user running an operator's
// command is refused with exit 5 and a message naming the verb they asked
// for, not a lookup the CLI made first.
func TestLeftAuditForbiddenNamesTheVerb(t *testing.T) {
	node := startSecured(t)
	as := func(user, pw string) []string {
		return []string{"NATS_URL=" + node.URL, "NATS_USER=" + user, "NATS_PASSWORD=" + pw}
	}
	runCLI(t, as("boss", adminPW), "agent", "start", "counter", "--id", "c1").must(t, "agent start as admin")
	runCLI(t, as("boss", adminPW), "agent", "call", "c1", "counter.increment", `{"by":1}`).must(t, "agent call as admin")
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	if err := os.WriteFile(events, []byte(`{"specversion":"1.0","id":"1","source":"x","type":"a.b"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		verb string
		args []string
	}{
		{"log.truncate", []string{"log", "truncate", "agent/c1", "--before", "2", "--yes"}},
		{"log.import", []string{"log", "import", events, "--stream", "agent/zz"}},
		{"agent.stop", []string{"agent", "stop", "c1", "--yes"}},
		{"agent.start", []string{"agent", "start", "counter", "--id", "c2"}},
		{"projection.rebuild", []string{"projection", "rebuild", "timeline"}},
		{"conv.fork", []string{"conv", "fork", "p/c", "--at", "1", "--as", "p/d"}},
	} {
		r := runCLI(t, as("app", clientPW), c.args...)
		if r.code != 5 || !strings.Contains(r.stderr, "its role does not allow "+c.verb) {
			t.Errorf("%v as a client: exit %d, stderr %q; want 5 naming %s", c.args, r.code, r.stderr, c.verb)
		}
	}
	// Nothing the client asked for was done.
	if out := runCLI(t, as("boss", adminPW), "agent", "state", "c1").must(t, "agent state"); !strings.Contains(out, `"count": 1`) && !strings.Contains(out, `"count":1`) {
		t.Errorf("c1 after the refusals:\n%s", out)
	}
}

// TestLeftAuditTLSErrorsSayWhatToDo: against a TLS node, a CLI without the
// CA, or without a client certificate where one is required, is told
// which flags to give, and exits 4 (the connection could not be made).
func TestLeftAuditTLSErrorsSayWhatToDo(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1", "localhost")
	t.Run("no CA", func(t *testing.T) {
		config := writeFile(t, "jido.yaml", "tls:\n  cert: "+pki.ServerCert+"\n  key: "+pki.ServerKey+"\n")
		node := StartNode(t, tools, t.TempDir(), "--config", config)
		env := []string{"NATS_URL=" + node.URL}
		r := runCLI(t, env, "agent", "list")
		if r.code != 4 || !strings.Contains(r.stderr, "--tlsca") || !strings.Contains(r.stderr, "NATS_CA") {
			t.Errorf("agent list without the CA: exit %d, stderr %q; want 4 and --tlsca", r.code, r.stderr)
		}
		runCLI(t, env, "agent", "list", "--tlsca", pki.CA).must(t, "agent list --tlsca")
	})
	t.Run("no client certificate", func(t *testing.T) {
		config := writeFile(t, "jido.yaml", "tls:\n  cert: "+pki.ServerCert+"\n  key: "+pki.ServerKey+"\n  ca: "+pki.CA+"\n  verify_clients: true\n")
		node := StartNode(t, tools, t.TempDir(), "--config", config)
		env := []string{"NATS_URL=" + node.URL, "NATS_CA=" + pki.CA}
		r := runCLI(t, env, "agent", "list")
		if r.code != 4 || !strings.Contains(r.stderr, "--tlscert") || !strings.Contains(r.stderr, "--tlskey") {
			t.Errorf("agent list without a client certificate: exit %d, stderr %q; want 4 and --tlscert/--tlskey", r.code, r.stderr)
		}
		runCLI(t, env, "agent", "list", "--tlscert", pki.ClientCert, "--tlskey", pki.ClientKey).must(t, "agent list --tlscert")
	})
	t.Run("the wrong CA", func(t *testing.T) {
		config := writeFile(t, "jido.yaml", "tls:\n  cert: "+pki.ServerCert+"\n  key: "+pki.ServerKey+"\n")
		node := StartNode(t, tools, t.TempDir(), "--config", config)
		other := natstest.NewPKI(t, "127.0.0.1")
		r := runCLI(t, []string{"NATS_URL=" + node.URL, "NATS_CA=" + other.CA}, "agent", "list")
		if r.code != 4 || !strings.Contains(r.stderr, "not signed by the CA in "+other.CA+" (from NATS_CA)") {
			t.Errorf("agent list with another CA: exit %d, stderr %q; want 4 naming the CA file", r.code, r.stderr)
		}
	})
	t.Run("TLS files for a plain server", func(t *testing.T) {
		node := StartNode(t, tools, t.TempDir())
		r := runCLI(t, []string{"NATS_URL=" + node.URL}, "agent", "list", "--tlsca", pki.CA)
		if r.code != 4 || !strings.Contains(r.stderr, "does not offer TLS") || !strings.Contains(r.stderr, "--tlsca") {
			t.Errorf("agent list --tlsca against a plain server: exit %d, stderr %q; want 4, no TLS offered", r.code, r.stderr)
		}
	})
}

// TestLeftAuditGrammarRefusalsAndEmptyLists: through the binary and the
// NATS CLI, an agent id or a stream name that breaks its grammar is
// answered with its own word (not not_found, not invalid_request) and
// dead-lettered; an undamaged log's verify lists "damaged":[].
func TestLeftAuditGrammarRefusalsAndEmptyLists(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	if out := node.NATS(t, "req", "--raw", "jido.api.log.verify", ""); !strings.Contains(out, `"damaged":[]`) {
		t.Errorf("log.verify of an undamaged log: %s", out)
	}
	for _, c := range []struct{ subject, body, want string }{
		{"jido.api.agent.state", `{"id":"a b"}`, "invalid_agent_id"},
		{"jido.api.agent.whereis", `{"id":"x.y.z"}`, "invalid_agent_id"},
		{"jido.api.agent.await", `{"id":"x.y.z","timeout":"1s"}`, "invalid_agent_id"},
		{"jido.api.log.show", `{"stream":"a//b"}`, "invalid_stream"},
		{"jido.api.log.truncate", `{"stream":"a b","before":2}`, "invalid_stream"},
	} {
		if out := node.NATS(t, "req", "--raw", c.subject, c.body); !strings.Contains(out, `"type":"`+c.want+`"`) {
			t.Errorf("%s %s: %s, want %s", c.subject, c.body, out, c.want)
		}
	}
	out := node.NATS(t, "req", "--raw", "jido.api.log.streams", `{"prefix":"dlq"}`)
	if !strings.Contains(out, `"stream":"dlq"`) || !strings.Contains(out, `"count":5`) {
		t.Errorf("the dead-letter stream after 5 refusals: %s", out)
	}
}

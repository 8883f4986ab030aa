package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// reply decodes a JSON reply printed by `nats req --raw`.
func reply(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &m); err != nil {
		t.Fatalf("reply %q is not JSON: %v", out, err)
	}
	return m
}

func errorType(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

// TestServeWithNATSCLI publishes signals with the real NATS CLI to a real
// `jido-bus serve` in all three forms (binary headers, structured, plain),
// sends bad ones, and watches the dead letters arrive on jido.dlq.> — with
// the CLI and with a Go client, which also checks the dead letters' headers.
func TestServeWithNATSCLI(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())

	nc, err := nats.Connect(node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	dlq, err := nc.SubscribeSync("jido.dlq.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	const badMessages = 4
	cliSub, cliDone := node.StartNATS(t, "sub", "jido.dlq.>", "--count", "4")
	testkit.Eventually(t, "the CLI subscription", func() bool {
		// The CLI prints its "Subscribing on" banner once subscribed.
		return strings.Contains(cliSub.String(), "Subscribing on")
	})

	ping := reply(t, node.NATS(t, "req", "--raw", "jido.api.ping", ""))
	if ping["ok"] != true || ping["version"] == "" {
		t.Fatalf("ping = %v", ping)
	}

	// Good signals, in each content mode, as broadcasts.
	binary := reply(t, node.NATS(t, "req", "--raw", "jido.signal.user.created", `{"name":"ada"}`,
		"-H", "ce-specversion:1.0", "-H", "ce-id:evt-1", "-H", "ce-source:cli", "-H", "ce-type:user.created", "-H", "content-type:application/json"))
	if binary["ok"] != true || binary["id"] != "evt-1" {
		t.Fatalf("binary = %v", binary)
	}
	structured := reply(t, node.NATS(t, "req", "--raw", "jido.signal.user.created",
		`{"specversion":"1.0","id":"evt-2","source":"cli","type":"user.created","data":{"name":"ada"}}`,
		"-H", "content-type:application/cloudevents+json"))
	if structured["ok"] != true || structured["id"] != "evt-2" {
		t.Fatalf("structured = %v", structured)
	}
	plain := reply(t, node.NATS(t, "req", "--raw", "jido.signal.user.created", `{"name":"ada"}`))
	if id, _ := plain["id"].(string); plain["ok"] != true || len(id) != 26 {
		t.Fatalf("plain = %v (want a ULID id)", plain)
	}
	node.NATS(t, "pub", "jido.signal.user.created", `{"name":"cast"}`) // a cast: no reply, no dead letter

	// Bad ones: each answered with its reason, each a dead letter.
	bad := []struct {
		args   []string
		reason string
	}{
		{[]string{"jido.signal.user.created", "{}", "-H", "ce-specversion:1.0", "-H", "ce-source:cli"}, bus.ReasonMissingAttribute},
		{[]string{"jido.signal.user.created", "{}", "-H", "ce-specversion:1.0", "-H", "ce-id:x", "-H", "ce-source:cli", "-H", "ce-type:user.deleted"}, bus.ReasonTypeMismatch},
		{[]string{"jido.signal.user.created", `{"specversion":"1.0",`, "-H", "content-type:application/cloudevents+json"}, bus.ReasonMalformed},
		{[]string{"jido.agent._nope.counter.increment", `{"by":1}`}, bus.ReasonInvalidAgentID},
	}
	if len(bad) != badMessages {
		t.Fatal("update badMessages")
	}
	for _, b := range bad {
		r := reply(t, node.NATS(t, append([]string{"req", "--raw"}, b.args...)...))
		if r["ok"] != false || errorType(r) != b.reason {
			t.Fatalf("nats req %v = %v, want %s", b.args, r, b.reason)
		}
		m, err := dlq.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("no dead letter for %v: %v", b.args, err)
		}
		if m.Subject != "jido.dlq."+b.reason || m.Header.Get(natsbus.HeaderDLQSubject) != b.args[0] || string(m.Data) != b.args[1] {
			t.Fatalf("dead letter %s %v %q for %v", m.Subject, m.Header, m.Data, b.args)
		}
	}
	if err := cliDone(); err != nil {
		t.Fatalf("nats sub: %v\n%s", err, cliSub.String())
	}
	for _, b := range bad {
		if !strings.Contains(cliSub.String(), `"jido.dlq.`+b.reason+`"`) {
			t.Errorf("the CLI did not see jido.dlq.%s:\n%s", b.reason, cliSub.String())
		}
	}

	// Each dead letter is in the log stream "dlq" too: read it through the
	// running node, and after shutdown straight from the data directory.
	dlqReasons := func(out string) []string {
		t.Helper()
		var reasons []string
		var list struct{ Entries []json.RawMessage }
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("log show -o json: %v\n%s", err, out)
		}
		for _, line := range list.Entries {
			var e struct {
				Event struct {
					Type string `json:"type"`
					Data struct {
						Reason string `json:"reason"`
					} `json:"data"`
				} `json:"event"`
			}
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatalf("log show entry %s: %v", line, err)
			}
			if e.Event.Type != natsbus.DeadLetterType {
				t.Fatalf("entry of type %q in dlq", e.Event.Type)
			}
			reasons = append(reasons, e.Event.Data.Reason)
		}
		return reasons
	}
	checkDLQ := func(reasons []string) {
		t.Helper()
		for i, b := range bad {
			if i >= len(reasons) || reasons[i] != b.reason {
				t.Fatalf("dlq stream holds %v, want %s at %d", reasons, b.reason, i)
			}
		}
	}
	// Dead letters are appended to the log in batches, just after the
	// sender was answered.
	var reasons []string
	testkit.Eventually(t, "the dead letters in the log", func() bool {
		reasons = dlqReasons(tools.Run(t, "log", "show", "dlq", "--json", "--nats-url", node.URL))
		return len(reasons) >= len(bad)
	})
	checkDLQ(reasons)

	// The node is still serving, then shuts down cleanly on SIGTERM.
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.ping", "")); r["ok"] != true {
		t.Fatalf("ping after bad input = %v", r)
	}
	nc.Close()
	if err := node.Stop(t); err != nil {
		t.Fatalf("serve did not exit 0 on SIGTERM: %v\n%s", err, node.Logs())
	}
	if !strings.Contains(node.Logs(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop in the log:\n%s", node.Logs())
	}
	checkDLQ(dlqReasons(tools.Run(t, "log", "show", "dlq", "--json", "--data-dir", node.DataDir)))
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// startSecuredIn is startSecured on a data dir the test keeps, so that it
// can start the node again on it.
func startSecuredIn(t *testing.T, dir string) *Node {
	t.Helper()
	config := writeFile(t, "jido.yaml", `
users:
  - name: app
    password: '`+bcryptHash(t, clientPW)+`'
    role: client
  - name: boss
    password: '`+bcryptHash(t, adminPW)+`'
    role: admin
`)
	return StartNode(t, tools, dir, "--config", config, "--emit-stream")
}

// TestEmitStreamThroughNATSCLI: casts made while no subscriber runs are
// in the node's JetStream stream JIDO_EMITS; a client (the role) adds a
// pull consumer with the NATS CLI and reads every emit, in order, once;
// it may not delete or purge the stream.
func TestEmitStreamThroughNATSCLI(t *testing.T) {
	node := startSecuredIn(t, t.TempDir())
	as := func(user, pw string, args ...string) string {
		t.Helper()
		out, err := natsAs(t, node, user, pw, args...)
		if err != nil {
			t.Fatalf("nats %v as %s: %v\n%s", args, user, err, out)
		}
		return out
	}
	as("boss", adminPW, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`)
	// Casts, nobody listening.
	as("app", clientPW, "pub", "jido.agent.c1.counter.increment", `{"by":1}`, "--count", "20")
	testkit.Eventually(t, "the 20 casts to be committed", func() bool {
		out, _ := natsAs(t, node, "app", clientPW, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`)
		return strings.Contains(out, `"count":20`)
	})

	as("app", clientPW, "consumer", "add", "JIDO_EMITS", "billing", "--pull", "--deliver", "all", "--ack", "explicit",
		"--filter", "jido.emit.c1.counter.changed", "--defaults")
	var counts []int
	testkit.Eventually(t, "the client to read 20 emits", func() bool {
		out, err := natsAs(t, node, "app", clientPW, "consumer", "next", "JIDO_EMITS", "billing", "--count", "5", "--wait", "1s")
		if err != nil && !strings.Contains(out, "timeout") {
			t.Fatalf("nats consumer next as a client: %v\n%s", err, out)
		}
		for _, m := range regexp.MustCompile(`\{"count":(\d+)\}`).FindAllStringSubmatch(out, -1) {
			var c int
			fmt.Sscan(m[1], &c)
			counts = append(counts, c)
		}
		return len(counts) >= 20
	})
	for i, c := range counts {
		if c != i+1 {
			t.Fatalf("the client read counts %v, want 1..20 in order, each once", counts)
		}
	}
	// Nothing more: each read once.
	if out, _ := natsAs(t, node, "app", clientPW, "consumer", "next", "JIDO_EMITS", "billing", "--wait", "500ms"); strings.Contains(out, `"count"`) {
		t.Fatalf("a 21st emit:\n%s", out)
	}

	for _, args := range [][]string{
		{"stream", "rm", "JIDO_EMITS", "--force"},
		{"stream", "purge", "JIDO_EMITS", "--force"},
		{"stream", "rmm", "JIDO_EMITS", "1", "--force"},
		{"consumer", "rm", "JIDO_EMITS", "billing", "--force"},
	} {
		if out, err := natsAs(t, node, "app", clientPW, args...); err == nil {
			t.Errorf("a client ran nats %v:\n%s", args, out)
		}
	}
	info := as("boss", adminPW, "stream", "info", "JIDO_EMITS", "--json")
	var si struct {
		State struct {
			Msgs      uint64 `json:"messages"`
			Consumers int    `json:"consumer_count"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(info), &si); err != nil {
		t.Fatal(err)
	}
	if si.State.Msgs != 21 || si.State.Consumers != 1 { // started and 20 changed
		t.Fatalf("after the client's attempts the stream holds %d messages and %d consumers, want 21 and 1", si.State.Msgs, si.State.Consumers)
	}
	// A push consumer's deliver subject is not checked against its
	// creator's permissions: the client has the 21 stored emits delivered
	// into the node's API in the node's queue group. The node refuses the
	// first with one dead letter and deletes the consumer; the log does
	// not get a dead letter per stored emit.
	dlqHead := func() uint64 {
		t.Helper()
		out := as("boss", adminPW, "req", "--raw", "jido.api.log.streams", `{"prefix":"dlq"}`)
		var ls struct {
			Streams []struct {
				Head uint64 `json:"head"`
			} `json:"streams"`
		}
		if err := json.Unmarshal([]byte(out), &ls); err != nil {
			t.Fatalf("log.streams: %v\n%s", err, out)
		}
		if len(ls.Streams) == 0 {
			return 0
		}
		return ls.Streams[0].Head
	}
	before := dlqHead()
	as("app", clientPW, "consumer", "add", "JIDO_EMITS", "flood", "--target", "jido.api.agent.stop",
		"--deliver-group", "jido-api", "--deliver", "all", "--ack", "explicit", "--defaults")
	testkit.Eventually(t, "the node to delete the consumer that delivered into it", func() bool {
		out, _ := natsAs(t, node, "boss", adminPW, "consumer", "ls", "JIDO_EMITS", "--names")
		return !strings.Contains(out, "flood")
	})
	testkit.Eventually(t, "the refusal's dead letter in the log", func() bool { return dlqHead() > before })
	if after := dlqHead(); after != before+1 {
		t.Fatalf("a consumer delivered 21 stored emits into the node: %d dead letters, want one", after-before)
	}

	// Made again under the same name, with its first deliveries taken
	// elsewhere (a subscriber that reads one and goes), then moved into
	// the node's subject: the node never sees a first delivery, only the
	// redeliveries after the ack wait. It deletes that consumer too, with
	// a dead letter of its own.
	taker := exec.Command(tools.NATS, "--server", node.URL, "--user", "boss", "--password", adminPW,
		"sub", "e2e.elsewhere", "--queue", "jido-api", "--count", "1")
	taker.Env = natsCLIEnv()
	took := &testkit.Buffer{}
	taker.Stdout, taker.Stderr = took, took
	if err := taker.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the subscriber elsewhere to listen", func() bool {
		return strings.Contains(took.String(), "Subscribing on e2e.elsewhere")
	})
	as("app", clientPW, "consumer", "add", "JIDO_EMITS", "flood", "--target", "e2e.elsewhere",
		"--deliver-group", "jido-api", "--deliver", "all", "--ack", "explicit", "--wait", "1s", "--defaults")
	if err := taker.Wait(); err != nil {
		t.Fatalf("the subscriber elsewhere: %v\n%s", err, took.String())
	}
	as("app", clientPW, "consumer", "edit", "JIDO_EMITS", "flood", "--target", "jido.api.agent.stop", "--force")
	testkit.Eventually(t, "the node to delete the consumer made again", func() bool {
		out, _ := natsAs(t, node, "boss", adminPW, "consumer", "ls", "JIDO_EMITS", "--names")
		return !strings.Contains(out, "flood")
	})
	testkit.Eventually(t, "the second consumer's dead letter in the log", func() bool { return dlqHead() > before+1 })
	if after := dlqHead(); after != before+2 {
		t.Fatalf("two consumers of one name: %d dead letters, want two", after-before)
	}
}

// TestEmitStreamAfterKill: under a flow of calls, the node is killed
// (SIGKILL) and started again on its data dir; the emit of every call it
// acknowledged is in the stream, once — recovery publishes again what the
// crash left unconfirmed, and the stream stores a copy it has once, by
// its Nats-Msg-Id.
func TestEmitStreamAfterKill(t *testing.T) {
	dir := t.TempDir()
	node := startSecuredIn(t, dir)
	if out, err := natsAs(t, node, "boss", adminPW, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	nc, err := nats.Connect(node.URL, nats.UserInfo("app", clientPW), nats.CustomInboxPrefix("_INBOX_app"), nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acked []int // the count each acknowledged call answered
	)
	flowDone := make(chan struct{})
	go func() {
		defer close(flowDone)
		for {
			msg, err := nc.Request("jido.agent.c1.counter.increment", []byte(`{"by":1}`), 5*time.Second)
			if err != nil {
				return // the node is gone
			}
			var r struct {
				OK    bool `json:"ok"`
				State struct {
					Count int `json:"count"`
				} `json:"state"`
			}
			if json.Unmarshal(msg.Data, &r) == nil && r.OK {
				mu.Lock()
				acked = append(acked, r.State.Count)
				mu.Unlock()
			}
		}
	}()
	testkit.Eventually(t, "200 acknowledged calls", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 200
	})
	node.Kill(t)
	<-flowDone
	nc.Close()
	mu.Lock()
	want := append([]int(nil), acked...)
	mu.Unlock()

	node = startSecuredIn(t, dir)
	rc, err := nats.Connect(node.URL, nats.UserInfo("app", clientPW), nats.CustomInboxPrefix("_INBOX_app"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	js, err := jetstream.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cons, err := js.CreateOrUpdateConsumer(ctx, "JIDO_EMITS", jetstream.ConsumerConfig{
		Durable: "audit", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "jido.emit.c1.counter.changed",
	})
	if err != nil {
		t.Fatalf("a client's pull consumer: %v", err)
	}
	seen := map[int]int{}
	last := want[len(want)-1]
	// Until the last acknowledged call's emit is read and nothing more
	// comes: a second copy would come after it.
	for got := -1; seen[last] == 0 || got != 0; {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got = 0
		for m := range batch.Messages() {
			got++
			var d struct{ Count int }
			if err := json.Unmarshal(m.Data(), &d); err != nil {
				t.Fatal(err)
			}
			seen[d.Count]++
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the stream lacks the emit of the last acknowledged call (count %d); read %d emits", last, len(seen))
		}
	}
	for _, c := range want {
		if seen[c] != 1 {
			t.Errorf("the emit of the acknowledged call with count %d is in the stream %d times, want once", c, seen[c])
		}
	}
	t.Logf("%d calls acknowledged before the kill, each emit in the stream once", len(want))
}

package natsbus

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// clusterNode is one Bus of a two-node test cluster: agents whose id
// starts with "a" are partition 0, the others partition 1.
type clusterNode struct {
	bus    *Bus
	serves [2]atomic.Bool
	mu     sync.Mutex
	got    []string // the agent ids it handled
}

func startClusterNode(t *testing.T, srv interface{ ClientURL() string }, name string) *clusterNode {
	t.Helper()
	nc, err := nats.Connect(srv.ClientURL(), nats.Name(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	n := &clusterNode{}
	n.bus = New(nc, Options{Partitions: &Partitioner{
		Of: func(msg *nats.Msg) (int, bool) {
			id := strings.TrimPrefix(msg.Subject, "jido.agent.")
			if id == msg.Subject {
				return 0, false
			}
			if strings.HasPrefix(id, "a") {
				return 0, true
			}
			return 1, true
		},
		Serves:         func(p int) bool { return n.serves[p].Load() },
		ForwardTimeout: 2 * time.Second,
	}})
	t.Cleanup(func() { _ = n.bus.Shutdown(context.Background()) })
	err = n.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		n.mu.Lock()
		n.got = append(n.got, d.Address.AgentID)
		n.mu.Unlock()
		d.Respond(map[string]any{"by": name})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *clusterNode) serve(t *testing.T, p int) {
	t.Helper()
	n.serves[p].Store(true)
	if err := n.bus.ServePartition(p); err != nil {
		t.Fatal(err)
	}
}

func callAgent(t *testing.T, nc *nats.Conn, id string) map[string]any {
	t.Helper()
	msg := nats.NewMsg("jido.agent." + id + ".counter.increment")
	for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": "s-" + id, "ce-source": "test", "ce-type": "counter.increment"} {
		msg.Header.Set(k, v)
	}
	msg.Data = []byte(`{}`)
	resp, err := nc.RequestMsg(msg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPartitionedInputReachesItsOwner(t *testing.T) {
	srv := natstest.RunServer(t)
	one := startClusterNode(t, srv, "one")
	two := startClusterNode(t, srv, "two")
	one.serve(t, 0)
	two.serve(t, 1)
	client := natstest.Connect(t, srv)
	// Whichever node the queue group picks, each agent is handled by the
	// owner of its partition, which answers the caller itself.
	for range 20 {
		if r := callAgent(t, client, "a1"); r["ok"] != true || r["by"] != "one" {
			t.Fatalf("a1 (partition 0, node one) answered %v", r)
		}
		if r := callAgent(t, client, "b1"); r["ok"] != true || r["by"] != "two" {
			t.Fatalf("b1 (partition 1, node two) answered %v", r)
		}
	}
	for _, got := range [][]string{one.got, two.got} {
		for i := 1; i < len(got); i++ {
			if got[i][0] != got[0][0] {
				t.Fatalf("a node handled agents of both partitions: %v", got)
			}
		}
	}
}

func TestPartitionWithoutOwnerIsRefusedUnavailable(t *testing.T) {
	srv := natstest.RunServer(t)
	one := startClusterNode(t, srv, "one")
	one.serve(t, 0) // nobody serves partition 1: its node died
	client := natstest.Connect(t, srv)
	dlq := make(chan *nats.Msg, 4)
	sub, err := client.ChanSubscribe("jido.dlq.>", dlq)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := client.Flush(); err != nil {
		t.Fatal(err)
	}
	r := callAgent(t, client, "b1")
	if r["ok"] != false || r["error"].(map[string]any)["type"] != bus.ReasonUnavailable {
		t.Fatalf("a call to a partition nobody serves answered %v, want unavailable", r)
	}
	select {
	case m := <-dlq:
		if m.Subject != "jido.dlq.unavailable" {
			t.Fatalf("dead letter on %s", m.Subject)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dead letter for the refused signal")
	}
}

// A message published on a partition's subject by someone who is not a
// node, naming a subject the node does not take input on, is refused.
func TestForwardForNoInputSubjectIsRefused(t *testing.T) {
	srv := natstest.RunServer(t)
	one := startClusterNode(t, srv, "one")
	one.serve(t, 0)
	client := natstest.Connect(t, srv)
	dlq := make(chan *nats.Msg, 4)
	sub, err := client.ChanSubscribe("jido.dlq.>", dlq)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	fwd := nats.NewMsg("jido.cluster.part.0")
	fwd.Header.Set(hdrForwardSubject, "jido.api.log.truncate")
	fwd.Data = []byte(`{"stream":"x","before":9}`)
	if err := client.PublishMsg(fwd); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-dlq:
		if m.Subject != "jido.dlq.forbidden" {
			t.Fatalf("dead letter on %s, want jido.dlq.forbidden", m.Subject)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dead letter for the forged forward")
	}
	one.mu.Lock()
	defer one.mu.Unlock()
	if len(one.got) != 0 {
		t.Fatalf("the node handled %v", one.got)
	}
}

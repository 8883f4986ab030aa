package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// crashKills is how many times the crash suite kills the node: a few in
// `make test`, JIDO_CRASH_KILLS (`make soak` sets 25) for the long run.
func crashKills(t *testing.T) int {
	if v := os.Getenv("JIDO_CRASH_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("JIDO_CRASH_KILLS=%q: want a positive number", v)
		}
		return n
	}
	return 3
}

// TestCrashSuite drives calls (and bursts of casts, some published twice)
// against `jido-bus serve` and kills it with SIGKILL at random moments,
// again and again, restarting it on the same data directory. The node talks to a NATS server of the test's own, so a
// subscriber sees every emit across the crashes, those re-published by
// recovery included. At the end: every acknowledged signal is in its
// agent's stream exactly once, every agent's state is what a replay of its
// stream gives (and each decision replays the same), and the signal of
// every committed Emit was published (duplicates allowed, same id).
func TestCrashSuite(t *testing.T) {
	kills := crashKills(t)
	srv := natstest.RunServer(t)
	watch := natstest.Connect(t, srv)
	var mu sync.Mutex
	published := map[string]int{}
	sub, err := watch.Subscribe("jido.emit.>", func(m *nats.Msg) {
		if id := m.Header.Get("ce-id"); id != "" {
			mu.Lock()
			published[id]++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}

	dataDir := t.TempDir()
	agentIDs := []string{"k0", "k1", "k2", "k3"}
	acked := map[string]string{} // signal id → agent id
	var ackMu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))

	for round := 0; round <= kills; round++ {
		n := StartNode(t, tools, dataDir, "--nats-url", srv.ClientURL())
		if round == 0 {
			for _, id := range agentIDs {
				r := reply(t, n.NATS(t, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"`+id+`"}`))
				if r["ok"] != true {
					t.Fatalf("start %s: %v", id, r)
				}
			}
		}
		if round == kills {
			// The last incarnation lets recovery finish its work and stops
			// cleanly.
			waitFor(t, "recovered directives to run", func() bool { return idle(t, n) })
			if err := n.Stop(t); err != nil {
				t.Fatalf("final stop: %v", err)
			}
			break
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := range 4 {
			nc := natstest.Connect(t, srv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				for i := 0; !stop.Load(); i++ {
					agent := agentIDs[(g+i)%len(agentIDs)]
					sig, msg := increment(agent, fmt.Sprintf("r%d-g%d-%d", round, g, i))
					resp, err := nc.RequestMsg(msg, 2*time.Second)
					if err != nil {
						continue // no answer: maybe committed, maybe not; not acknowledged
					}
					var st bus.ReplyStatus
					if json.Unmarshal(resp.Data, &st) == nil && st.OK {
						ackMu.Lock()
						acked[sig.ID()] = agent
						ackMu.Unlock()
					}
				}
			}()
		}
		// Two casters publish bursts, so that signals queue up in the
		// agents' inboxes and are committed several to an append; every
		// seventh cast is published twice, as a retrying publisher would,
		// so that some batches meet a signal already in the log.
		for g := range 2 {
			nc := natstest.Connect(t, srv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				for i := 0; !stop.Load(); i++ {
					agent := agentIDs[i%len(agentIDs)]
					_, msg := increment(agent, fmt.Sprintf("r%d-c%d-%d", round, g, i))
					_ = nc.PublishMsg(msg)
					if i%7 == 0 {
						_ = nc.PublishMsg(msg)
					}
					if i%16 == 15 {
						// A burst, then a pause: the calls keep their share.
						_ = nc.FlushTimeout(time.Second)
						time.Sleep(60 * time.Millisecond)
					}
				}
			}()
		}
		time.Sleep(time.Duration(150+rng.IntN(600)) * time.Millisecond)
		n.Kill(t)
		stop.Store(true)
		wg.Wait()
	}
	if len(acked) == 0 {
		t.Fatal("no call was acknowledged")
	}

	// Check the data directory with the node stopped.
	l, err := eventlog.Open(node.LogDir(dataDir), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	types, err := node.AgentTypes(nil)
	if err != nil {
		t.Fatal(err)
	}
	directives := agents.NewDirectiveCodec()
	inLog := map[string]int{}
	var emits []string
	for _, id := range agentIDs {
		stream := "agent/" + id
		for e, err := range l.ReadStream(stream, eventlog.ReadOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			switch e.Event.Type() {
			case "counter.increment":
				inLog[e.Event.ID()]++
			case runtime.TypeCmd:
				var rec struct {
					Directives json.RawMessage `json:"directives"`
				}
				if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
					t.Fatal(err)
				}
				ds, err := directives.DecodeAll(rec.Directives)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					if e, ok := d.(agents.Emit); ok {
						emits = append(emits, e.Signal.ID())
					}
				}
			}
		}
		res, err := runtime.Replay(l.ReadStream(stream, eventlog.ReadOptions{}), types, directives, runtime.ReplayOptions{Verify: true})
		if err != nil || res.Divergence != nil {
			t.Fatalf("replay %s: %+v %v", stream, res.Divergence, err)
		}
		var replayed struct{ Count float64 }
		_ = json.Unmarshal(res.State, &replayed)
		if int(replayed.Count) != int(res.Version) {
			t.Fatalf("%s: replayed count %v after %d increments by 1", stream, replayed.Count, res.Version)
		}
	}
	for id, agent := range acked {
		if inLog[id] != 1 {
			t.Fatalf("acknowledged signal %s (agent %s) is in the log %d times", id, agent, inLog[id])
		}
	}
	for id, n := range inLog {
		if n != 1 {
			t.Fatalf("signal %s is in the log %d times", id, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	missing := 0
	for _, id := range emits {
		if published[id] == 0 {
			missing++
			t.Errorf("the emit %s of a committed decision was never published", id)
		}
	}
	t.Logf("%d kills, %d calls acknowledged, %d signals in the log, %d emits committed, %d missing", kills, len(acked), len(inLog), len(emits), missing)
}

// increment returns a counter.increment by 1 with the given id, and the
// NATS message that sends it to agent.
func increment(agent, id string) (bus.Signal, *nats.Msg) {
	sig, _ := bus.NewSignal("counter.increment", "crash-suite", map[string]int{"by": 1})
	sig.SetID(id)
	msg, _ := codec.Encode("jido.agent."+agent+".counter.increment", &sig, codec.Binary)
	return sig, msg
}

// idle reports whether the node has nothing queued.
func idle(t *testing.T, n *Node) bool {
	r := reply(t, n.NATS(t, "req", "--raw", "jido.api.agent.list", ""))
	list, _ := r["agents"].([]any)
	for _, a := range list {
		if q, _ := a.(map[string]any)["queue_length"].(float64); q > 0 {
			return false
		}
	}
	return len(list) > 0
}

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The cluster tests run jido-bus nodes, as child processes of the real
// binary, on a 3-server NATS cluster with JetStream started in the test,
// and a client that keeps every acknowledgement: at the end, every
// acknowledged increment is in the replicated log exactly once and every
// counter's state says so.

const clusterPartitions = 8

// natsCluster is the NATS cluster of a test, with its addresses as they
// were when it started (a server shut down keeps its place in them).
type natsCluster struct {
	*jstest.Cluster
	urls, monitor string
}

func startNATSCluster(t *testing.T) natsCluster {
	c := jstest.StartCluster(t, 3)
	return natsCluster{c, c.URLs(), strings.Join(c.MonitorURLs(), ",")}
}

// clusterNode starts node id of the cluster c.
func clusterNode(t *testing.T, c natsCluster, id, dataDir string) *Node {
	t.Helper()
	return StartNode(t, tools, dataDir, clusterArgs(c, id)...)
}

// clusterArgs are the serve flags of node id of the cluster c.
func clusterArgs(c natsCluster, id string) []string {
	return []string{"--cluster", "--nats-url", c.urls, "--node-id", id,
		"--partitions", fmt.Sprint(clusterPartitions), "--lease-timeout", "2s",
		"--nats-monitor", c.monitor, "--drain-timeout", "10s", "--emit-stream"}
}

// acker sends increments and keeps what was acknowledged.
type acker struct {
	t  *testing.T
	nc *nats.Conn

	mu    sync.Mutex
	acked map[string]map[string]bool // agent → signal ids acknowledged
	tries int
	round int           // rounds of load done
	moved chan struct{} // closed, and made again, at the end of each round
	// failed is why the load stopped, nil while it runs.
	failed error
	// ackedAt is when each agent's increments were acknowledged, in
	// order; kills is when the test killed or cut off something.
	ackedAt map[string][]time.Time
	kills   []time.Time
	// serversLost is how many times a NATS server went down under the
	// load: each may take with it the emit in flight on every node
	// connection to it (see verifyEmits).
	serversLost int
}

func newAcker(t *testing.T, nc *nats.Conn) *acker {
	return &acker{t: t, nc: nc, acked: map[string]map[string]bool{}, moved: make(chan struct{}), ackedAt: map[string][]time.Time{}}
}

// mustRequest is request failing the test on error; only the test's
// goroutine may call it.
func (a *acker) mustRequest(subject string, hdr nats.Header, body []byte, deadline time.Duration) map[string]any {
	a.t.Helper()
	r, err := a.request(subject, hdr, body, deadline)
	if err != nil {
		a.t.Fatal(err)
	}
	return r
}

// request sends body to subject until the reply is ok (retrying what the
// cluster answers unavailable, or not at all, as a client should: with
// the same signal id), and returns the reply, or an error after deadline
// or for any other refusal.
func (a *acker) request(subject string, hdr nats.Header, body []byte, deadline time.Duration) (map[string]any, error) {
	end := time.Now().Add(deadline)
	var last string
	for time.Now().Before(end) {
		a.mu.Lock()
		a.tries++
		a.mu.Unlock()
		msg := &nats.Msg{Subject: subject, Header: hdr, Data: body}
		resp, err := a.nc.RequestMsg(msg, 2*time.Second)
		if err != nil {
			last = err.Error()
			if errors.Is(err, nats.ErrNoResponders) {
				time.Sleep(50 * time.Millisecond) // no node subscribed yet: let one start
			}
			continue
		}
		var r map[string]any
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			return nil, fmt.Errorf("%s: reply %q: %v", subject, resp.Data, err)
		}
		if r["ok"] == true {
			return r, nil
		}
		last = string(resp.Data)
		if errorType(r) != "unavailable" {
			return nil, fmt.Errorf("%s: %s", subject, resp.Data)
		}
		time.Sleep(10 * time.Millisecond) // a client's backoff while partitions move
	}
	return nil, fmt.Errorf("%s: no acknowledgement within %s; last answer: %s", subject, deadline, last)
}

func (a *acker) start(id string) {
	a.t.Helper()
	body, _ := json.Marshal(map[string]any{"type": "counter", "id": id})
	a.mustRequest("jido.api.agent.start", nil, body, time.Minute)
	a.mu.Lock()
	a.acked[id] = map[string]bool{}
	a.mu.Unlock()
}

// increment adds 1 to agent id under signal sid, until acknowledged.
func (a *acker) increment(id, sid string) error {
	hdr := nats.Header{}
	for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": sid, "ce-source": "e2e-cluster", "ce-type": "counter.increment", "content-type": "application/json"} {
		hdr.Set(k, v)
	}
	if _, err := a.request("jido.agent."+id+".counter.increment", hdr, []byte(`{"by":1}`), time.Minute); err != nil {
		return err
	}
	a.mu.Lock()
	a.acked[id][sid] = true
	a.ackedAt[id] = append(a.ackedAt[id], time.Now())
	a.mu.Unlock()
	return nil
}

// killing notes that a node is about to be killed, for failoverTimes.
func (a *acker) killing() {
	a.mu.Lock()
	a.kills = append(a.kills, time.Now())
	a.mu.Unlock()
}

// failoverTimes is, for each kill, the longest any agent went without an
// acknowledgement across it: from its last acknowledgement before the
// kill to its first after (the agents whose partition did not move
// answer on; those of the killed node wait for the lease to run out).
func (a *acker) failoverTimes() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []time.Duration
	for _, k := range a.kills {
		var worst time.Duration
		for _, times := range a.ackedAt {
			i, _ := slices.BinarySearchFunc(times, k, func(t, k time.Time) int { return t.Compare(k) })
			if i == 0 || i == len(times) {
				continue
			}
			worst = max(worst, times[i].Sub(times[i-1]))
		}
		out = append(out, worst)
	}
	return out
}

// logFailover reports the failover times, without asserting on them:
// they are wall-clock figures of a loaded machine.
func (a *acker) logFailover(t *testing.T) {
	times := a.failoverTimes()
	if len(times) == 0 {
		return
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	t.Logf("failover (last acknowledgement before a kill to the first after, worst agent) over %d kills: median %s, max %s; each: %v",
		len(times), sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), times)
}

// load sends rounds of one increment to every agent, concurrently per
// agent, until stop is closed; it returns when the last round is done.
func (a *acker) load(ids []string, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ids))
		for i, id := range ids {
			wg.Go(func() { errs[i] = a.increment(id, fmt.Sprintf("%s-%d", id, n)) })
		}
		wg.Wait()
		a.mu.Lock()
		if a.failed = errors.Join(errs...); a.failed != nil {
			close(a.moved)
			a.mu.Unlock()
			return
		}
		a.round = n + 1
		close(a.moved)
		a.moved = make(chan struct{})
		a.mu.Unlock()
	}
}

// verify checks every acknowledged increment is in agent id's stream
// exactly once, nothing else is, and the state counts them all.
func (a *acker) verify(log *jslog.Log, id string) {
	a.t.Helper()
	seen := map[string]int{}
	var last uint64
	for e, err := range log.ReadStream("agent/"+id, eventlog.ReadOptions{}) {
		if err != nil {
			a.t.Fatalf("read agent/%s: %v", id, err)
		}
		if e.Seq != last+1 {
			a.t.Fatalf("agent/%s: entry %d after %d", id, e.Seq, last)
		}
		last = e.Seq
		if e.Event.Type() == "counter.increment" {
			seen[e.Event.ID()]++
		}
	}
	a.mu.Lock()
	acked := a.acked[id]
	a.mu.Unlock()
	for sid := range acked {
		if seen[sid] != 1 {
			a.t.Errorf("agent %s: acknowledged signal %s is in the log %d times", id, sid, seen[sid])
		}
	}
	for sid, n := range seen {
		if !acked[sid] || n != 1 {
			a.t.Errorf("agent %s: signal %s in the log %d times, acknowledged %v", id, sid, n, acked[sid])
		}
	}
	r := a.mustRequest("jido.api.agent.state", nil, []byte(`{"id":"`+id+`"}`), time.Minute)
	state, _ := r["state"].(map[string]any)
	if got := state["count"]; got != float64(len(acked)) {
		a.t.Errorf("agent %s: count %v, want %d acknowledged increments", id, got, len(acked))
	}
	// The state is the one a verified replay of the replicated log comes
	// to: every decision, whichever node made it, decided again the same.
	args := []string{"log", "replay", "agent/" + id, "--verify", "-o", "json"}
	out := runCLI(a.t, []string{"NATS_URL=" + strings.Join(a.nc.Servers(), ",")}, args...).must(a.t, args...)
	var replayed struct {
		State map[string]any `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &replayed); err != nil {
		a.t.Fatalf("agent %s: log replay --verify: %v\n%s", id, err, out)
	}
	if !reflect.DeepEqual(replayed.State, state) {
		a.t.Errorf("agent %s: state %v, its verified replay %v", id, state, replayed.State)
	}
}

// verifyAll checks every agent of ids (verify) and the emit stream
// (verifyEmits), and returns how many increments were acknowledged, over
// how many requests.
func (a *acker) verifyAll(ids []string) (total, tries int) {
	a.t.Helper()
	log, err := jslog.Open(a.t.Context(), a.nc, jslog.Options{Partitions: clusterPartitions})
	if err != nil {
		a.t.Fatal(err)
	}
	for _, id := range ids {
		a.verify(log, id)
	}
	a.verifyEmits(ids)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.acked {
		total += len(s)
	}
	return total, a.tries
}

// verifyEmits checks the cluster's emit stream, which a service that was
// down reads to catch up: it holds, for each agent, one counter.changed
// per acknowledged increment — none twice though a node that took a
// partition over ran its pending emits again, and none lost across node
// kills. Emits go out on plain NATS, confirmed when the server a node is
// connected to has them: a server that goes down may take with it the one
// emit in flight on each agent (docs/cluster.md says so), so each agent
// may be short by as many as servers went down, and no more.
func (a *acker) verifyEmits(ids []string) {
	a.t.Helper()
	js, err := jetstream.New(a.nc)
	if err != nil {
		a.t.Fatal(err)
	}
	st, err := js.Stream(a.t.Context(), "JIDO_EMITS")
	if err != nil {
		a.t.Fatalf("the emit stream: %v", err)
	}
	// An emit is published after its commit is acknowledged: the last
	// ones may still be on their way when the load stops.
	var short []string
	lostInFlight := 0
	var infoErr error
	_ = testkit.Poll(30*time.Second, func() error {
		info, err := st.Info(a.t.Context(), jetstream.WithSubjectFilter("jido.emit.*.counter.changed"))
		if infoErr = err; err != nil {
			return err
		}
		if info.Config.Replicas != 3 {
			a.t.Errorf("the emit stream has %d replicas, want the log's 3", info.Config.Replicas)
			return nil
		}
		short, lostInFlight = short[:0], 0
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, id := range ids {
			got, want := info.State.Subjects["jido.emit."+id+".counter.changed"], uint64(len(a.acked[id]))
			switch {
			case got > want:
				a.t.Errorf("agent %s: %d counter.changed in the emit stream, more than its %d acknowledged increments", id, got, want)
			case want-got > uint64(a.serversLost):
				short = append(short, fmt.Sprintf("%s %d of %d", id, got, want))
			default:
				lostInFlight += int(want - got)
			}
		}
		if len(short) == 0 || a.t.Failed() {
			return nil
		}
		return errors.New("emits still on their way")
	})
	if infoErr != nil {
		a.t.Fatalf("the emit stream's info: %v", infoErr)
	}
	if len(short) > 0 {
		a.t.Errorf("the emit stream is missing emits after 30s, more than the %d NATS servers that went down can explain: %v", a.serversLost, short)
	}
	if lostInFlight > 0 {
		a.t.Logf("the emit stream misses %d emits in flight to a NATS server as it went down (each still in the log)", lostInFlight)
	}
}

// waitRounds waits until the load has done n more rounds.
func (a *acker) waitRounds(n int) {
	a.t.Helper()
	a.mu.Lock()
	want := a.round + n
	a.mu.Unlock()
	timeout := time.After(2 * time.Minute)
	for {
		a.mu.Lock()
		done, moved, failed := a.round >= want, a.moved, a.failed
		a.mu.Unlock()
		if failed != nil {
			a.t.Fatalf("the load stopped: %v", failed)
		}
		if done {
			return
		}
		select {
		case <-moved:
		case <-timeout:
			a.t.Fatalf("the load did not make %d more rounds in 2 minutes", n)
		}
	}
}

func TestClusterFailoverLosesNothingAcknowledged(t *testing.T) {
	c := startNATSCluster(t)
	n1 := clusterNode(t, c, "n1", t.TempDir())
	dir2 := t.TempDir()
	n2 := clusterNode(t, c, "n2", dir2)

	nc := c.Connect(t, nats.MaxReconnects(-1))
	a := newAcker(t, nc)
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%d", i)
		a.start(ids[i])
	}
	// Whichever node answers, the list holds every node's agents.
	r := a.mustRequest("jido.api.agent.list", nil, []byte(`{"limit":5}`), time.Minute)
	if agents, _ := r["agents"].([]any); len(agents) != 5 || r["next"] == nil {
		t.Fatalf("agent list limit 5 = %v", r)
	}
	r = a.mustRequest("jido.api.agent.list", nil, []byte(`{}`), time.Minute)
	if agents, _ := r["agents"].([]any); len(agents) != len(ids) {
		t.Fatalf("agent list listed %d agents, want the cluster's %d: %v", len(agents), len(ids), r)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); a.load(ids, stop) }()
	a.waitRounds(3)

	// kill -9 one node: its partitions move to the other within the lease,
	// and each move is published as a lifecycle signal.
	moved := make(chan *nats.Msg, 1024)
	sub, err := nc.ChanSubscribe("jido.emit.cluster.>", moved)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	a.killing()
	n2.Kill(t)
	a.waitRounds(3)
	failovers := 0
	for len(moved) > 0 {
		m := <-moved
		var data struct{ From, To, Reason string }
		if err := json.Unmarshal(m.Data, &data); err != nil {
			t.Fatalf("%s: %q: %v", m.Subject, m.Data, err)
		}
		if m.Header.Get("ce-type") != "jido.cluster.partition.moved" {
			t.Fatalf("%s: type %q", m.Subject, m.Header.Get("ce-type"))
		}
		if data.Reason == "failover" && data.From == "n2" && data.To == "n1" {
			failovers++
		}
	}
	if failovers == 0 {
		t.Fatal("no partition.moved signal said n1 took n2's partitions over")
	}
	_ = sub.Unsubscribe()
	// One NATS server goes: the quorum of the others holds.
	a.mu.Lock()
	a.serversLost++
	a.mu.Unlock()
	c.Servers[2].Shutdown()
	a.waitRounds(3)
	// The killed node comes back and takes its share again, by hand-over.
	n2 = clusterNode(t, c, "n2", dir2)
	a.waitRounds(3)
	// A node paused (SIGSTOP) past its lease: the other takes its
	// partitions; when it runs again it must not decide for them.
	if err := n1.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	a.waitRounds(3)
	if err := n1.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	a.waitRounds(3)
	close(stop)
	<-done

	total, tries := a.verifyAll(ids)
	t.Logf("%d increments acknowledged over %d requests, over a node killed, a NATS server shut down and a node paused", total, tries)
	a.logFailover(t)
	if err := n2.Stop(t); err != nil {
		t.Errorf("n2 stop: %v", err)
	}
	if err := n1.Stop(t); err != nil {
		t.Errorf("n1 stop: %v", err)
	}
}

// TestClusterSoak is make soak's cluster run (JIDO_SOAK=1): under the same
// load, kill -9 a jido-bus node and start it again JIDO_CLUSTER_KILLS
// times (default 20), and every fourth time also kill a NATS server and
// bring it back; nothing acknowledged may be lost or decided twice.
func TestClusterSoak(t *testing.T) {
	if os.Getenv("JIDO_SOAK") == "" {
		t.Skip("the long cluster run is make soak's (JIDO_SOAK=1); make test runs TestClusterFailoverLosesNothingAcknowledged")
	}
	kills := 20
	if v, err := strconv.Atoi(os.Getenv("JIDO_CLUSTER_KILLS")); err == nil && v > 0 {
		kills = v
	}
	c := startNATSCluster(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	nodes := make([]*Node, len(dirs))
	for i, d := range dirs {
		nodes[i] = clusterNode(t, c, fmt.Sprintf("n%d", i+1), d)
	}
	nc := c.Connect(t, nats.MaxReconnects(-1))
	a := newAcker(t, nc)
	ids := make([]string, 24)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%d", i)
		a.start(ids[i])
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); a.load(ids, stop) }()
	a.waitRounds(2)
	natsKills := 0
	for k := range kills {
		i := k % len(nodes)
		a.killing()
		nodes[i].Kill(t)
		if k%4 == 3 {
			s := natsKills % len(c.Servers)
			a.mu.Lock()
			a.serversLost++
			a.mu.Unlock()
			if err := c.Restart(s); err != nil {
				t.Fatal(err)
			}
			natsKills++
		}
		a.waitRounds(2)
		nodes[i] = clusterNode(t, c, fmt.Sprintf("n%d", i+1), dirs[i])
		a.waitRounds(2)
	}
	close(stop)
	<-done
	total, tries := a.verifyAll(ids)
	t.Logf("%d node kills, %d NATS server restarts: %d increments acknowledged over %d requests, each in the log once", kills, natsKills, total, tries)
	a.logFailover(t)
	for _, n := range nodes {
		if err := n.Stop(t); err != nil {
			t.Errorf("stop: %v", err)
		}
	}
}

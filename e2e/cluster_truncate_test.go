package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/eventlog/jslog"
)

// TestClusterTruncateThenFailover: `jido-bus log truncate` through a
// cluster node removes an agent's oldest entries from the replicated log
// (the node snapshots the agent first, as on one node); what remains
// verifies, reads from its first entry, and after the owner is killed -9
// the agent comes back on the other node from its snapshot and what
// follows it with the same state, and goes on counting. `cluster status`
// shows each node's lag (its heartbeat's age, the partitions it is still
// recovering) in its table and -o json.
func TestClusterTruncateThenFailover(t *testing.T) {
	c := startNATSCluster(t)
	n1 := clusterNode(t, c, "n1", t.TempDir())
	nc := c.Connect(t)
	a := newAcker(t, nc)
	a.start("c1")
	for i := range 8 {
		if err := a.increment("c1", fmt.Sprintf("c1-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"NATS_URL=" + c.urls}
	run := func(args ...string) string {
		t.Helper()
		return runCLI(t, env, args...).must(t, args...)
	}
	state := func() map[string]any {
		t.Helper()
		r := a.mustRequest("jido.api.agent.state", nil, []byte(`{"id":"c1"}`), time.Minute)
		s, _ := r["state"].(map[string]any)
		return s
	}
	before := state()
	l, err := jslog.Open(t.Context(), nc, jslog.Options{Partitions: clusterPartitions})
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Stream("agent/c1")
	if err != nil || info.First != 1 {
		t.Fatalf("agent/c1 before truncation: %+v, %v", info, err)
	}
	cut := info.Head - 2

	// A dry run says what would go and removes nothing.
	var dry struct {
		Removed int    `json:"removed"`
		From    uint64 `json:"from"`
		DryRun  bool   `json:"dry_run"`
	}
	if err := json.Unmarshal([]byte(run("log", "truncate", "agent/c1", "--before", fmt.Sprint(cut), "--dry-run", "-o", "json")), &dry); err != nil {
		t.Fatal(err)
	}
	if dry.Removed == 0 || dry.From != 1 || !dry.DryRun {
		t.Fatalf("dry run %+v: want entries from 1", dry)
	}
	if again, _ := l.Stream("agent/c1"); again.First != 1 {
		t.Fatalf("after a dry run agent/c1 begins at %d", again.First)
	}
	out := run("log", "truncate", "agent/c1", "--before", fmt.Sprint(cut), "--yes")
	if !strings.Contains(out, "agent/c1: removed") {
		t.Fatalf("log truncate: %s", out)
	}
	after, err := l.Stream("agent/c1")
	if err != nil || after.First <= 1 || after.First > cut {
		t.Fatalf("agent/c1 after truncating below %d: %+v, %v", cut, after, err)
	}
	snap, err := l.LoadSnapshot("agent/c1")
	if err != nil || snap.Version+1 < after.First {
		t.Fatalf("the snapshot of agent/c1 (%+v, %v) does not cover the cut at %d", snap.Version, err, after.First)
	}
	// What remains verifies, and reads from its first entry; a read
	// from below it says the entries are gone.
	if out := run("log", "verify"); !strings.Contains(out, "ok") {
		t.Fatalf("log verify after truncation: %s", out)
	}
	var shown struct {
		Entries []struct {
			Seq uint64 `json:"seq"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(run("log", "show", "agent/c1", "--limit", "0", "-o", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.Entries) == 0 || shown.Entries[0].Seq != after.First || shown.Entries[len(shown.Entries)-1].Seq != after.Head {
		t.Fatalf("log show agent/c1 after truncation: %+v; want %d to %d", shown.Entries, after.First, after.Head)
	}
	if r := runCLI(t, env, "log", "show", "agent/c1", "--from", "1"); r.code == 0 || !strings.Contains(r.stderr, "truncated") {
		t.Fatalf("log show agent/c1 --from 1: exit %d, %s; want it gone", r.code, r.stderr)
	}

	// Replay decides every signal again from the first, never from a
	// snapshot: on a truncated stream it says the entries are gone, as on
	// one node.
	if r := runCLI(t, env, "log", "replay", "agent/c1", "--verify"); r.code == 0 || !strings.Contains(r.stderr, "were truncated") {
		t.Fatalf("log replay of a truncated stream: exit %d, %s; want it to say the entries were truncated", r.code, r.stderr)
	}

	// A second node joins; cluster status shows both with their lag.
	n2 := clusterNode(t, c, "n2", t.TempDir())
	var st struct {
		Nodes []struct {
			ID           string `json:"id"`
			Alive        bool   `json:"alive"`
			HeartbeatAge *int64 `json:"heartbeat_age_ns"`
			Recovering   []int  `json:"recovering"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(run("cluster", "status", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Nodes) != 2 {
		t.Fatalf("cluster status nodes %+v, want n1 and n2", st.Nodes)
	}
	for _, n := range st.Nodes {
		if n.HeartbeatAge == nil || *n.HeartbeatAge < 0 || n.Recovering == nil {
			t.Errorf("cluster status node %+v: want its heartbeat age and its recovering partitions (a list)", n)
		}
	}
	if table := run("cluster", "status"); !strings.Contains(table, "HEARTBEAT AGE") || !strings.Contains(table, "RECOVERING") {
		t.Errorf("cluster status table does not show each node's lag:\n%s", table)
	}

	// The owner dies: n2 brings c1 back from the snapshot and what
	// follows it, to the state it had.
	n1.Kill(t)
	if got := state(); !reflect.DeepEqual(got, before) {
		t.Fatalf("c1 after truncation and failover: %v, before: %v", got, before)
	}
	if err := a.increment("c1", "c1-after"); err != nil {
		t.Fatal(err)
	}
	if got := state()["count"]; got != float64(9) {
		t.Fatalf("c1 counts %v after one more increment, want 9", got)
	}
	if out := run("log", "verify"); !strings.Contains(out, "ok") {
		t.Fatalf("log verify after failover: %s", out)
	}
	if err := n2.Stop(t); err != nil {
		t.Errorf("n2 stop: %v", err)
	}
}

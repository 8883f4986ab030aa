package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/eventlog/jslog"
)

// TestClusterLogThroughTheCLI: `jido-bus log` through a cluster node reads
// the replicated log, where the agents' entries are (the node's own log
// holds none of them): streams, show, verify and replay --verify of an
// agent's history, with the runtime's snapshot in the replicated log's
// snapshot stream; what the replicated log cannot do (the global log, a
// node's own dead letters) is refused saying so.
func TestClusterLogThroughTheCLI(t *testing.T) {
	c := startNATSCluster(t)
	n1 := clusterNode(t, c, "n1", t.TempDir())
	nc := c.Connect(t)
	a := newAcker(t, nc)
	// A snapshot every 2 signals: the runtime's store is the replicated
	// log, so its snapshots must be in the snapshot stream.
	a.mustRequest("jido.api.agent.start", nil, []byte(`{"type":"counter","id":"c1","options":{"snapshot_every":2}}`), time.Minute)
	a.acked["c1"] = map[string]bool{}
	a.start("c2")
	for i := range 5 {
		if err := a.increment("c1", fmt.Sprintf("c1-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.increment("c2", "c2-0"); err != nil {
		t.Fatal(err)
	}

	env := []string{"NATS_URL=" + c.urls}
	run := func(args ...string) string {
		t.Helper()
		return runCLI(t, env, args...).must(t, args...)
	}

	// log streams lists the agents' streams across partitions.
	var listed struct {
		Streams []struct {
			Stream string `json:"stream"`
			Head   uint64 `json:"head"`
		} `json:"streams"`
	}
	if err := json.Unmarshal([]byte(run("log", "streams", "--stream-prefix", "agent/", "-o", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	heads := map[string]uint64{}
	for _, s := range listed.Streams {
		heads[s.Stream] = s.Head
	}
	if len(heads) != 2 || heads["agent/c1"] == 0 || heads["agent/c2"] == 0 {
		t.Fatalf("log streams --stream-prefix agent/ listed %+v; want agent/c1 and agent/c2", listed.Streams)
	}

	// log show agent/c1: every increment, in order, with no gap.
	var shown struct {
		Entries []struct {
			Seq   uint64 `json:"seq"`
			Event struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"event"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(run("log", "show", "agent/c1", "--limit", "0", "-o", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	var increments []string
	for i, e := range shown.Entries {
		if e.Seq != uint64(i+1) {
			t.Fatalf("log show agent/c1: entry %d has seq %d", i, e.Seq)
		}
		if e.Event.Type == "counter.increment" {
			increments = append(increments, e.Event.ID)
		}
	}
	if want := "c1-0 c1-1 c1-2 c1-3 c1-4"; strings.Join(increments, " ") != want || uint64(len(shown.Entries)) != heads["agent/c1"] {
		t.Fatalf("log show agent/c1: increments %v in %d entries (head %d); want %s", increments, len(shown.Entries), heads["agent/c1"], want)
	}
	// The table too, as a user reads it.
	if table := run("log", "show", "agent/c1", "--type", "counter.increment"); strings.Count(table, "counter.increment") != 5 {
		t.Fatalf("log show agent/c1 --type counter.increment printed:\n%s", table)
	}

	// log verify reads every message of the replicated log.
	if out := run("log", "verify"); !strings.Contains(out, "ok") {
		t.Fatalf("log verify: %s", out)
	}

	// replay --verify decides every signal again and compares.
	var replayed struct {
		Version uint64         `json:"version"`
		State   map[string]any `json:"state"`
	}
	out := run("log", "replay", "agent/c1", "--verify")
	if !strings.Contains(out, "verified: every decision came out as the log recorded it") || !strings.Contains(out, `"count":5`) {
		t.Fatalf("log replay agent/c1 --verify:\n%s", out)
	}
	if err := json.Unmarshal([]byte(run("log", "replay", "agent/c1", "--verify", "-o", "json")), &replayed); err != nil {
		t.Fatal(err)
	}
	if replayed.State["count"] != float64(5) {
		t.Fatalf("replay's state %v; want count 5", replayed.State)
	}

	// log emits of an agent reads its stream in the replicated log.
	var emitted struct {
		Emits []struct {
			Status string `json:"status"`
			Event  struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			} `json:"event"`
		} `json:"emits"`
	}
	if err := json.Unmarshal([]byte(run("log", "emits", "agent/c1", "-o", "json")), &emitted); err != nil {
		t.Fatal(err)
	}
	if n := len(emitted.Emits); n != 5 || emitted.Emits[4].Event.Type != "counter.changed" || string(emitted.Emits[4].Event.Data) != `{"count":5}` {
		t.Fatalf("log emits agent/c1: %+v; want 5 counter.changed, the last with count 5", emitted.Emits)
	}

	// The runtime snapshotted c1 into the replicated log's snapshot stream.
	l, err := jslog.Open(t.Context(), nc, jslog.Options{Partitions: clusterPartitions})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := l.LoadSnapshot("agent/c1")
	if err != nil || snap.Version == 0 || snap.Version > heads["agent/c1"] {
		t.Fatalf("snapshot of agent/c1 in the replicated log: %+v, %v", snap, err)
	}

	// What the replicated log cannot do is refused, saying what to do.
	for _, refused := range []struct {
		args []string
		says string
	}{
		{[]string{"log", "tail", "--all"}, "the replicated log has no global order"},
		{[]string{"log", "show", "dlq"}, "keeps its dead letters in its own data dir"},
		{[]string{"log", "emits"}, "name an agent's stream"},
	} {
		r := runCLI(t, env, refused.args...)
		if r.code == 0 || !strings.Contains(r.stderr, refused.says) || !strings.Contains(r.stderr, "cluster_unsupported") {
			t.Errorf("jido-bus %s: exit %d, stderr %q; want a refusal saying %q", strings.Join(refused.args, " "), r.code, r.stderr, refused.says)
		}
	}
	if err := n1.Stop(t); err != nil {
		t.Errorf("n1 stop: %v", err)
	}
}

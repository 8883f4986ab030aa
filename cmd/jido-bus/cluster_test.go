package main

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
	"github.com/jido-bus/jido-bus/cluster"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestClusterStatus: `cluster status` reads the bucket a member joined
// and prints its node and the partitions it owns, as a table and as
// JSON; a prefix no cluster uses is "not found" (exit code 3).
func TestClusterStatus(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	c := jstest.StartCluster(t, 3)
	nc := c.Connect(t)
	m, err := cluster.Join(t.Context(), nc, cluster.Options{Prefix: "cs", NodeID: "n1", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	testkit.Eventually(t, "n1 to own every partition", func() bool { return len(m.Owned()) == 4 })

	out, err := runRoot(t, "cluster", "status", "--server", c.URLs(), "--prefix", "cs", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var st cluster.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if st.Bucket != "CS_CLUSTER" || st.Partitions != 4 || len(st.Nodes) != 1 || len(st.Owners) != 4 {
		t.Fatalf("status %+v", st)
	}
	if n := st.Nodes[0]; n.ID != "n1" || !n.Alive || n.Owned != 4 || n.HeartbeatAge <= 0 {
		t.Errorf("node %+v: want n1, alive, owning 4, with its heartbeat's age", n)
	}
	for _, field := range []string{`"heartbeat_age_ns":`, `"recovering":[]`} {
		if !strings.Contains(out, field) {
			t.Errorf("JSON without %s (each node's lag):\n%s", field, out)
		}
	}
	for _, o := range st.Owners {
		if o.Owner != "n1" || o.Epoch != 1 {
			t.Errorf("partition %+v: want n1 at epoch 1", o)
		}
	}

	out, err = runRoot(t, "cluster", "status", "--server", c.URLs(), "--prefix", "cs")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"bucket CS_CLUSTER: 4 partitions, 3 replicas", "NODE", "n1", "yes", "RECOVERING", "HEARTBEAT AGE", "PARTITION", "OWNER"} {
		if !strings.Contains(out, want) {
			t.Errorf("table does not say %q:\n%s", want, out)
		}
	}

	out, err = runRoot(t, "cluster", "status", "--server", c.URLs(), "--prefix", "nothere")
	if code := exitCode(err); code != exitNotFound || !strings.Contains(err.Error(), "NOTHERE_CLUSTER") {
		t.Errorf("status of a prefix with no cluster: exit %d, %v\n%s; want exit %d naming the bucket", code, err, out, exitNotFound)
	}
}

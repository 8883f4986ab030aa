package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestReadStatus(t *testing.T) {
	const P = 4
	r := newRecorder(t)
	prefix := newPrefix()
	a := r.join(r.options(prefix, "n1", P))
	b := r.join(r.options(prefix, "n2", P))
	testkit.EventuallyNil(t, "two members own every partition", func() error { return assigned(P, a, b) })
	st, err := ReadStatus(t.Context(), connect(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if st.Partitions != P || st.Replicas != 3 || st.Bucket != bucketName(prefix) {
		t.Errorf("status %+v: want %d partitions, 3 replicas, bucket %s", st, P, bucketName(prefix))
	}
	if len(st.Nodes) != 2 || st.Nodes[0].ID != "n1" || st.Nodes[1].ID != "n2" {
		t.Fatalf("nodes %+v, want n1 and n2", st.Nodes)
	}
	owned := 0
	for _, n := range st.Nodes {
		if !n.Alive || n.PID == 0 || n.LastHeartbeat.IsZero() {
			t.Errorf("node %+v: want alive, with a pid and a heartbeat", n)
		}
		owned += n.Owned
	}
	if owned != P || len(st.Owners) != P {
		t.Errorf("nodes own %d partitions, %d listed; want %d", owned, len(st.Owners), P)
	}
	for _, o := range st.Owners {
		node, epoch, _ := a.Owner(o.Partition)
		if o.Owner != node || o.Epoch != epoch || o.Since.IsZero() {
			t.Errorf("partition %+v; the member sees %s at epoch %d", o, node, epoch)
		}
	}
	if ms := a.Status(); len(ms.Nodes) != 2 || !ms.Nodes[0].Alive || !ms.Nodes[1].Alive || len(ms.Owners) != P {
		t.Errorf("member status %+v", ms)
	}

	_, err = ReadStatus(t.Context(), connect(t), newPrefix())
	if !errors.Is(err, ErrNoCluster) {
		t.Errorf("status of a prefix with no cluster: %v, want ErrNoCluster", err)
	}
	if _, err := ReadStatus(t.Context(), connect(t), "a.b"); err == nil || !strings.Contains(err.Error(), "one subject token") {
		t.Errorf("status under prefix a.b: %v, want a refusal naming the prefix", err)
	}
}

package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Status is the cluster as one observer sees it.
type Status struct {
	Bucket     string `json:"bucket"`
	Partitions int    `json:"partitions"`
	// Replicas is what the first node asked for when it created the
	// cluster.
	Replicas int               `json:"replicas"`
	Nodes    []NodeStatus      `json:"nodes"`
	Owners   []PartitionStatus `json:"owners"`
}

// NodeStatus is one node's record.
type NodeStatus struct {
	ID      string    `json:"id"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// LastHeartbeat is when the node last wrote its record, by the
	// node's own clock (not the observer's).
	LastHeartbeat time.Time     `json:"last_heartbeat_node_clock"`
	LeaseTimeout  time.Duration `json:"lease_timeout_ns"`
	// HeartbeatAge is how far behind its liveness the node is: from a
	// Member, how long ago on the member's clock it saw the record
	// change; from ReadStatus, the reader's clock now minus the time the
	// JetStream server stored the record (the server's clock, the same
	// for every node, never the node's own). A live node rewrites its
	// record every quarter of its lease timeout.
	HeartbeatAge time.Duration `json:"heartbeat_age_ns"`
	// Alive: its HeartbeatAge is within its lease timeout. From
	// ReadStatus that compares the reader's clock with the server's and is
	// only as good as they agree.
	Alive   bool `json:"alive"`
	Leaving bool `json:"leaving"`
	// Owned is how many partitions name it the owner.
	Owned int `json:"owned"`
	// Recovering lists, as of its last heartbeat, the partitions it owns
	// whose agents it is still bringing back from the log: it is behind
	// on them, and their signals are answered unavailable until it is
	// not. Empty when the node serves everything it owns.
	Recovering []int `json:"recovering"`
}

// PartitionStatus is one partition's record; Owner "" is vacant.
type PartitionStatus struct {
	Partition int    `json:"partition"`
	Owner     string `json:"owner"`
	Epoch     uint64 `json:"epoch"`
	// Since is when the owner took it (or when it was released), by
	// the writer's clock; zero if it was never taken.
	Since time.Time `json:"since"`
}

// Status is the cluster as this member's watch last showed it, with
// liveness as this member judges it.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	st := Status{Bucket: m.kv.Bucket(), Partitions: m.opts.Partitions, Replicas: m.opts.Replicas}
	for id, n := range m.view.nodes {
		if !n.present {
			continue
		}
		alive := m.view.alive(id, m.opts.LeaseTimeout, now) || (id == m.opts.NodeID && now.Sub(m.nodeLease) < m.opts.fenceAfter())
		st.Nodes = append(st.Nodes, nodeStatus(n.rec, now.Sub(n.changed), alive))
	}
	for p, pv := range m.view.parts {
		st.Owners = append(st.Owners, PartitionStatus{Partition: p, Owner: pv.rec.Owner, Epoch: pv.rec.Epoch, Since: pv.rec.Since})
	}
	st.finish()
	return st
}

func nodeStatus(r nodeRecord, age time.Duration, alive bool) NodeStatus {
	recovering := r.Recovering
	if recovering == nil {
		recovering = []int{}
	}
	return NodeStatus{ID: r.ID, Host: r.Host, PID: r.PID, Started: r.Started, LastHeartbeat: r.Heartbeat,
		LeaseTimeout: msDuration(r.LeaseTimeoutMS), HeartbeatAge: age, Alive: alive, Leaving: r.Leaving, Recovering: recovering}
}

// finish sorts the nodes and counts their partitions.
func (st *Status) finish() {
	slices.SortFunc(st.Nodes, func(a, b NodeStatus) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	for i := range st.Nodes {
		for _, o := range st.Owners {
			if o.Owner == st.Nodes[i].ID {
				st.Nodes[i].Owned++
			}
		}
	}
	if st.Nodes == nil {
		st.Nodes = []NodeStatus{}
	}
	if st.Owners == nil {
		st.Owners = []PartitionStatus{}
	}
}

// ErrNoCluster: no node has joined a cluster under the prefix.
var ErrNoCluster = errors.New("no cluster")

// ReadStatus reads the cluster's bucket once, for a command line: nodes
// with their last heartbeat (by each node's clock), its age (this
// machine's clock against the server's time of the record) and whether
// that is within the node's lease timeout, the partitions each node is
// still recovering, partitions with owner,
// epoch and since when.
func ReadStatus(ctx context.Context, nc *nats.Conn, prefix string) (Status, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if strings.ContainsAny(prefix, ".*> \t\r\n") {
		return Status{}, fmt.Errorf("prefix %q must be one subject token (no '.', '*', '>' or spaces), as the cluster's nodes use it", prefix)
	}
	name := bucketName(prefix)
	js, err := jetstream.New(nc)
	if err != nil {
		return Status{}, err
	}
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return Status{}, fmt.Errorf("%w under prefix %q: JetStream has no bucket %s; is the prefix right, and has a node started with serve --cluster?", ErrNoCluster, prefix, name)
	}
	if err != nil {
		return Status{}, fmt.Errorf("read cluster bucket %s: %w", name, err)
	}
	cfg, err := readConfig(ctx, kv)
	if err != nil {
		return Status{}, err
	}
	st := Status{Bucket: name, Partitions: cfg.Partitions, Replicas: cfg.Replicas}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return Status{}, fmt.Errorf("read cluster bucket %s: %w", name, err)
	}
	defer w.Stop()
	owners := make([]PartitionStatus, cfg.Partitions)
	for p := range owners {
		owners[p].Partition = p
	}
	for {
		select {
		case <-ctx.Done():
			return Status{}, fmt.Errorf("read cluster bucket %s: %w", name, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return Status{}, fmt.Errorf("read cluster bucket %s: the connection was closed", name)
			}
			if e == nil {
				st.Owners = owners
				st.finish()
				return st, nil
			}
			node, p, isNode, ok := parseKey(e.Key())
			switch {
			case !ok:
			case isNode:
				var r nodeRecord
				if json.Unmarshal(e.Value(), &r) != nil {
					continue
				}
				r.ID = node
				age := time.Since(e.Created())
				st.Nodes = append(st.Nodes, nodeStatus(r, age, age <= msDuration(r.LeaseTimeoutMS)))
			case p < cfg.Partitions:
				var r partitionRecord
				if json.Unmarshal(e.Value(), &r) == nil {
					owners[p] = PartitionStatus{Partition: p, Owner: r.Owner, Epoch: r.Epoch, Since: r.Since}
				}
			}
		}
	}
}

package node

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/cluster"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
)

// Cluster mode. The node connects to a NATS cluster with JetStream
// (NATSConfig.URL), keeps the agents' log there (eventlog/jslog: P
// partition streams, replicated), and decides for the partitions the
// cluster's membership (package cluster) gives it; input for the others
// goes to their owners (natsbus.Partitioner). The local data dir keeps
// only what is the node's own: its dead letters and read models.

// ClusterConfig configures cluster mode; a nil *ClusterConfig in Config is
// a single node.
type ClusterConfig struct {
	// NodeID names the node in the cluster; two running nodes may not
	// share one.
	NodeID string
	// Partitions is P, fixed when the cluster is first started; a node
	// given another P refuses to start. Zero means DefaultPartitions.
	Partitions int
	// Replicas of the log's streams and the membership bucket. Zero means
	// 3; fewer lose acknowledged writes with one server's disk, so 1 or 2
	// must be asked for with AllowFewerReplicas (development only).
	Replicas           int
	AllowFewerReplicas bool
	// LeaseTimeout is how long a node may be silent before the others
	// take its partitions. Zero means cluster.DefaultLeaseTimeout.
	LeaseTimeout time.Duration
	// MonitorURLs are the servers' monitoring endpoints
	// (http://host:8222), read at start to check that every server fsyncs
	// every write; without them the node asks over $SYS, which needs a
	// system account user.
	MonitorURLs []string
}

// DefaultPartitions is ClusterConfig.Partitions' default: enough that
// rendezvous hashing spreads them evenly over a handful of nodes, few
// enough that each node renews its leases cheaply (one small write per
// partition every quarter lease).
const DefaultPartitions = 64

// partitions is P with its default.
func (c *ClusterConfig) partitions() int {
	if c.Partitions == 0 {
		return DefaultPartitions
	}
	return c.Partitions
}

// replicas is R with its default.
func (c *ClusterConfig) replicas() int {
	if c.Replicas == 0 {
		return 3
	}
	return c.Replicas
}

// openClusterLog checks that the servers keep what they acknowledge and
// opens the replicated log.
func (n *Node) openClusterLog(ctx context.Context) (*jslog.Log, error) {
	c := n.cfg.Cluster
	if n.cfg.NATS.URL == "" {
		return nil, errors.New("cluster mode needs the NATS cluster's URLs (--nats-url nats://a:4222,nats://b:4222,nats://c:4222): the embedded server is one machine")
	}
	if err := jslog.CheckCluster(ctx, n.conn.NC, c.MonitorURLs, n.log); err != nil {
		return nil, err
	}
	l, err := jslog.Open(ctx, n.conn.NC, jslog.Options{
		Prefix: n.subjects.Name(), Partitions: c.partitions(), Replicas: c.Replicas,
		AllowFewerReplicas: c.AllowFewerReplicas, Limits: n.cfg.Limits,
	})
	if err != nil {
		return nil, fmt.Errorf("open the replicated log: %w", err)
	}
	return l, nil
}

// busPartitioner routes input by the partition of the agent it is for.
func (n *Node) busPartitioner() *natsbus.Partitioner {
	p := n.cfg.Cluster.partitions()
	return agentapi.Partitioner(n.subjects, func(stream string) int { return jslog.Partition(stream, p) },
		// The runtime serves what it has brought back; the membership
		// says, on this call's clock, whether the lease still holds (a
		// node resuming from a pause forwards at once).
		func(part int) bool {
			m := n.member.Load()
			return n.rt != nil && n.rt.Serves(part) && (m == nil || m.Owns(part))
		})
}

// joinCluster takes the node's share of the partitions: each one it is
// given is brought back from the log (its agents, their pending
// directives and timers) before the node takes its input, and each one it
// gives up stops taking input before its agents finish what they had.
func (n *Node) joinCluster(ctx context.Context) error {
	c := n.cfg.Cluster
	moves := n.metrics.watchCluster(n)
	// The leases have a connection of their own: on the node's, a
	// renewal would wait behind every commit and emit written before it,
	// and a node busy enough would lose its partitions for being busy.
	mc, err := connect(n.cfg.NATS, n.subjects, "", n.log, nil)
	if err != nil {
		return fmt.Errorf("connect for the cluster's membership: %w", err)
	}
	n.memberConn = mc
	var self atomic.Pointer[cluster.Member] // for the callbacks, Leave or not
	owner := runtime.Owner{Runtime: n.rt, Input: n.bus, Logger: n.log}
	m, err := cluster.Join(ctx, mc.NC, cluster.Options{
		Prefix:             n.subjects.Name(),
		NodeID:             c.NodeID,
		Partitions:         c.partitions(),
		Replicas:           c.Replicas,
		AllowFewerReplicas: c.AllowFewerReplicas,
		LeaseTimeout:       c.LeaseTimeout,
		Logger:             n.log,
		OnMove:             cluster.Announce(n.conn.NC, n.subjects, c.NodeID, moves, n.log),
		OnAcquire:          owner.Acquire,
		OnRelease: func(p int) {
			m := self.Load()
			owner.Release(p, m != nil && m.HandingOver(p))
		},
	})
	if err != nil {
		return err
	}
	self.Store(m)
	n.member.Store(m)
	return nil
}

// clusterList is the agent API's cluster-wide list on this node: the
// membership says which nodes must answer.
func (n *Node) clusterList() *agentapi.ClusterList {
	return &agentapi.ClusterList{
		Conn: n.conn.NC, Subjects: n.subjects, Runtime: n.rt, NodeID: n.cfg.Cluster.NodeID,
		Live: func() (map[string]bool, error) {
			m := n.member.Load()
			if m == nil {
				return nil, bus.Errorf(bus.ReasonUnavailable, "the node is joining its cluster; retry")
			}
			live := map[string]bool{}
			for _, nd := range m.Status().Nodes {
				if nd.Alive {
					live[nd.ID] = true
				}
			}
			return live, nil
		},
	}
}

// ClusterLost is closed when the node can no longer be a member of its
// cluster (another process took its node id, or its connection closed):
// it must stop, and a supervisor start it again. Nil (never closed) on a
// single node.
func (n *Node) ClusterLost() <-chan struct{} {
	m := n.member.Load()
	if m == nil {
		return nil
	}
	return m.Done()
}

// ClusterErr says why ClusterLost was closed.
func (n *Node) ClusterErr() error {
	m := n.member.Load()
	if m == nil {
		return nil
	}
	if err := m.Err(); err != nil {
		return err
	}
	return errors.New("the node left its cluster")
}

// leaveCluster hands the node's partitions over to the other nodes.
func (n *Node) leaveCluster(ctx context.Context) error {
	m := n.member.Swap(nil)
	if m == nil {
		return nil
	}
	return m.Leave(ctx)
}

// closeMemberConn closes the membership's connection, once the Member
// has stopped.
func (n *Node) closeMemberConn() {
	if n.memberConn != nil {
		_ = n.memberConn.Close()
		n.memberConn = nil
	}
}

// Sever closes the node's connections to NATS at once, its membership's
// included, as the node's machine dying would: no more heartbeats, no
// hand-over, nothing more written. Benchmarks and tests use it to measure
// and check failover; the node must still be Shut down afterwards.
func (n *Node) Sever() {
	if n.memberConn != nil {
		n.memberConn.NC.Close()
	}
	n.conn.NC.Close()
}

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/cluster"
	"github.com/jido-bus/jido-bus/node"
)

// serveClusterFile is the cluster: section of serve --config: cluster
// mode, one node of several on a NATS cluster with JetStream.
//
//	cluster:
//	  enabled: true
//	  node_id: n1
//	  partitions: 16        # fixed when the cluster is first started
//	  replicas: 3
//	  lease_timeout: 6s
//	  monitor: [http://a:8222, http://b:8222, http://c:8222]
type serveClusterFile struct {
	Enabled      *bool    `yaml:"enabled"`
	NodeID       string   `yaml:"node_id"`
	Partitions   int      `yaml:"partitions"`
	Replicas     int      `yaml:"replicas"`
	LeaseTimeout string   `yaml:"lease_timeout"`
	Monitor      []string `yaml:"monitor"`
}

// serveCluster is cluster mode's part of serveConfig.
type serveCluster struct {
	on           bool
	nodeID       string
	partitions   int
	replicas     int
	leaseTimeout time.Duration
	monitor      []string
}

func addServeClusterFlags(cmd *cobra.Command, cfg *serveConfig) {
	f := cmd.Flags()
	c := &cfg.cluster
	f.BoolVar(&c.on, "cluster", false, "run as one node of several on a NATS cluster with JetStream (--nats-url, or $NATS_URL): the log is replicated in JetStream, and the nodes share the agents by partition")
	f.StringVar(&c.nodeID, "node-id", "", "this node's name in the cluster (--cluster), unique among the running nodes; default the host name")
	f.IntVar(&c.partitions, "partitions", node.DefaultPartitions, "the number of partitions, fixed when the cluster is first started (--cluster); a node given another number refuses to start")
	f.IntVar(&c.replicas, "replicas", 3, "replicas of the log's streams (--cluster); fewer than 3 lose acknowledged writes with one server's disk: 1 is for development only")
	f.DurationVar(&c.leaseTimeout, "lease-timeout", cluster.DefaultLeaseTimeout, "how long a node may be silent before the others take its partitions (--cluster)")
	f.StringSliceVar(&c.monitor, "nats-monitor", nil, "the NATS servers' monitoring URLs (http://host:8222,…), read at start to check that each fsyncs every write (--cluster); without them the node asks over $SYS, which needs a system account user")
}

// resolveServeCluster completes cluster mode's settings from the file's
// section f (what no flag gave) and checks them.
func resolveServeCluster(cfg *serveConfig, f serveClusterFile, changed func(string) bool, getenv func(string) string) error {
	c := &cfg.cluster
	if f.Enabled != nil && !changed("cluster") {
		c.on = *f.Enabled
	}
	if f.NodeID != "" && !changed("node-id") {
		c.nodeID = f.NodeID
	}
	if f.Partitions != 0 && !changed("partitions") {
		c.partitions = f.Partitions
	}
	if f.Replicas != 0 && !changed("replicas") {
		c.replicas = f.Replicas
	}
	if f.LeaseTimeout != "" && !changed("lease-timeout") {
		d, err := time.ParseDuration(f.LeaseTimeout)
		if err != nil {
			return fmt.Errorf("--config %s: cluster.lease_timeout %q: give a duration such as 6s", cfg.configPath, f.LeaseTimeout)
		}
		c.leaseTimeout = d
	}
	if len(f.Monitor) > 0 && !changed("nats-monitor") {
		c.monitor = f.Monitor
	}
	if !c.on {
		for _, name := range []string{"node-id", "partitions", "replicas", "lease-timeout", "nats-monitor"} {
			if changed(name) {
				return fmt.Errorf("--%s is a setting of cluster mode: add --cluster (and --nats-url with the NATS cluster's URLs)", name)
			}
		}
		if cfg.emitStream && cfg.natsURL != "" {
			return errors.New("--emit-stream makes the stream on the embedded server, or on a cluster's servers with --cluster; a single node on --nats-url leaves that server's streams alone: make the stream there (nats stream add, subjects <prefix>.emit.>) or leave out --emit-stream")
		}
		return nil
	}
	if cfg.natsURL == "" {
		// As every NATS client does; only in cluster mode, where an
		// external server is the point: a single node given nothing
		// starts its embedded server whatever the environment says.
		cfg.natsURL = getenv("NATS_URL")
	}
	switch {
	case cfg.natsURL == "":
		return errors.New("--cluster needs the NATS cluster's URLs: --nats-url nats://a:4222,nats://b:4222,nats://c:4222 (the embedded server is one machine)")
	case c.partitions < 1 || c.partitions > 1024:
		return fmt.Errorf("--partitions %d: give 1 to 1024 (more partitions spread the agents over more nodes; each is a JetStream stream)", c.partitions)
	case c.replicas < 1 || c.replicas > 5:
		return fmt.Errorf("--replicas %d: give 3 (or 5); 1 only for development", c.replicas)
	case c.leaseTimeout < time.Second:
		return fmt.Errorf("--lease-timeout %s: give at least 1s; a node is taken for dead after this long without a heartbeat", c.leaseTimeout)
	case len(cfg.open) > 0 || cfg.http.Listen != "":
		return errors.New("--open and --http are not available in cluster mode yet: projects live in one node's folders; run them on a single node")
	}
	if c.nodeID == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			return errors.New("--cluster: give this node a name with --node-id (the host name is unknown)")
		}
		c.nodeID = host
	}
	if strings.ContainsAny(c.nodeID, ".*> \t") {
		return fmt.Errorf("--node-id %q: use letters, digits, '-' and '_' (it is a key in the cluster's bucket)", c.nodeID)
	}
	return nil
}

// clusterConfig is the node's configuration of cluster mode, nil when off.
func (cfg serveConfig) clusterConfig() *node.ClusterConfig {
	c := cfg.cluster
	if !c.on {
		return nil
	}
	return &node.ClusterConfig{
		NodeID: c.nodeID, Partitions: c.partitions, Replicas: c.replicas,
		AllowFewerReplicas: c.replicas < 3, LeaseTimeout: c.leaseTimeout, MonitorURLs: c.monitor,
	}
}

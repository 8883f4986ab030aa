package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/cluster"
)

// newClusterCmd is `jido-bus cluster`: what the nodes of a cluster
// (serve --cluster) have agreed on, read from JetStream.
func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect a cluster of nodes: which node owns which partition",
	}
	cmd.AddCommand(newClusterStatusCmd())
	return cmd
}

const clusterStatusShape = `one object: {"bucket","partitions":P,"replicas":R,
"nodes":[{"id","host","pid","started","last_heartbeat_node_clock","lease_timeout_ns",
"heartbeat_age_ns","alive","leaving","owned","recovering":[P…]}…],"owners":[{"partition","owner","epoch","since"}…]}; an
owner "" is a vacant partition.`

func newClusterStatusCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the cluster's nodes and each partition's owner, epoch and since when",
		Long: `Print the cluster's nodes and each partition's owner, epoch and since when,
as the cluster's key-value bucket in JetStream holds them (JIDO_CLUSTER
under --prefix jido). It reads the bucket directly: no node has to answer,
and any NATS client that may read the bucket sees the same (nats kv ls,
nats kv get).

Each node's lag: HEARTBEAT AGE is how long ago the JetStream server
stored the node's last heartbeat (this machine's clock against the
server's; a live node writes one every quarter of its lease timeout), and
ALIVE says whether that is within the node's lease timeout, so it is only
as right as the two clocks agree. RECOVERING lists the partitions the
node owns whose agents it is still bringing back from the log, as of its
last heartbeat: their signals are answered unavailable until it has
caught up. The nodes themselves judge each other by their records
changing, on their own clocks.`,
		Example: `  jido-bus cluster status --server nats://a:4222
  jido-bus cluster status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, _, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
			defer cancel()
			st, err := cluster.ReadStatus(ctx, nc, f.prefix)
			switch {
			case errors.Is(err, cluster.ErrNoCluster):
				return &bus.Error{Type: bus.ReasonNotFound, Message: err.Error()}
			case errors.Is(err, context.DeadlineExceeded):
				return &bus.Error{Type: bus.ReasonUnavailable, Message: fmt.Sprintf("cluster status: no answer from JetStream at %s within --timeout %s: %v", f.url, f.timeout, err)}
			case err != nil:
				return fmt.Errorf("cluster status: %w", err)
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			return printClusterStatus(cmd, st)
		},
	}
	f.register(cmd)
	documentJSON(cmd, clusterStatusShape)
	return cmd
}

func printClusterStatus(cmd *cobra.Command, st cluster.Status) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "bucket %s: %d partitions, %d replicas\n\n", st.Bucket, st.Partitions, st.Replicas)
	nodes := newTable(w, "NODE", "ALIVE", "OWNS", "RECOVERING", "HEARTBEAT AGE", "HOST", "PID", "STARTED")
	for _, n := range st.Nodes {
		alive := "no"
		switch {
		case n.Alive && n.Leaving:
			alive = "leaving"
		case n.Alive:
			alive = "yes"
		}
		recovering := "-"
		if len(n.Recovering) > 0 {
			recovering = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(n.Recovering)), ","), "[]")
		}
		nodes.row(n.ID, alive, n.Owned, recovering, n.HeartbeatAge.Round(100*time.Millisecond), n.Host, n.PID, n.Started.Local().Format(time.DateTime))
	}
	if err := nodes.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	parts := newTable(w, "PARTITION", "OWNER", "EPOCH", "SINCE (WRITER'S CLOCK)")
	for _, o := range st.Owners {
		owner, since := o.Owner, "-"
		if owner == "" {
			owner = "(vacant)"
		}
		if !o.Since.IsZero() {
			since = o.Since.Local().Format(time.DateTime)
		}
		parts.row(o.Partition, owner, o.Epoch, since)
	}
	return parts.flush()
}

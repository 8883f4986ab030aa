package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
	"github.com/jido-bus/jido-bus/cluster"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/node"
)

// The cluster the scenario runs on: three NATS servers (the smallest
// that keeps a quorum when one is lost) and two jido-bus nodes (the
// fewest that can fail over), with P partitions of the log.
const (
	clusterServers    = 3
	clusterNodes      = 2
	clusterPartitions = 16
	clusterReplicas   = 3
	// clusterPrefix is the nodes' subject prefix (the default).
	clusterPrefix = "jido"
)

// benchCluster is the NATS cluster and the jido-bus nodes running on it,
// all in this process.
type benchCluster struct {
	env     *Env
	nats    *jstest.Cluster
	admin   *nats.Conn
	commits *commitCounter // every node's committed casts, one count
	nodes   []*node.Node   // the live nodes
	ids     []string       // their node ids, in the order of nodes
	started int            // nodes started so far: names the next one
	logs    []*os.File     // every node's log, closed last
}

// startBenchCluster starts the servers, their stores under env.Dir/nats,
// and clusterNodes nodes, and waits until the nodes serve every partition.
func startBenchCluster(ctx context.Context, env *Env, commits *commitCounter) (bc *benchCluster, err error) {
	dir := filepath.Join(env.Dir, "nats")
	servers := 0
	storeDir := func() string {
		servers++
		return filepath.Join(dir, "s"+strconv.Itoa(servers))
	}
	js, err := jstest.Start(clusterServers, storeDir)
	if err != nil {
		return nil, fmt.Errorf("start the %d-server NATS cluster: %w", clusterServers, err)
	}
	bc = &benchCluster{env: env, nats: js, commits: commits}
	defer func() {
		if err != nil {
			bc.close()
		}
	}()
	if bc.admin, err = nats.Connect(js.URLs(), nats.Name("jido-bus bench cluster admin")); err != nil {
		return nil, fmt.Errorf("connect to the NATS cluster %s: %w", js.URLs(), err)
	}
	for range clusterNodes {
		if err := bc.startNode(ctx); err != nil {
			return nil, err
		}
	}
	return bc, bc.awaitServed(ctx)
}

// startNode starts one more node with a fresh node id and data dir. A node
// stopped abruptly is replaced by a new one rather than restarted under
// its id, which the cluster would refuse for a lease timeout (until the
// dead run's heartbeat has stood still that long).
func (bc *benchCluster) startNode(ctx context.Context) error {
	bc.started++
	id := "n" + strconv.Itoa(bc.started)
	commits := bc.commits
	// Each node logs to <id>.log beside its data dir: what moved when,
	// for a figure that needs explaining.
	logFile, err := os.Create(filepath.Join(bc.env.Dir, id+".log"))
	if err != nil {
		return fmt.Errorf("create the log of cluster node %s: %w", id, err)
	}
	bc.logs = append(bc.logs, logFile)
	n, err := node.Start(ctx, node.Config{
		Logger:  slog.New(slog.NewTextHandler(logFile, nil)),
		DataDir: filepath.Join(bc.env.Dir, id),
		NATS:    node.NATSConfig{URL: bc.nats.URLs()},
		Cluster: &node.ClusterConfig{
			NodeID:       id,
			Partitions:   clusterPartitions,
			Replicas:     clusterReplicas,
			LeaseTimeout: bc.env.Config.ClusterLease,
			MonitorURLs:  bc.nats.MonitorURLs(),
		},
		Runtime: func(rc *runtime.Config) { rc.Store = &countingStore{Store: rc.Store, c: commits} },
	})
	if err != nil {
		return fmt.Errorf("start cluster node %s (its log: %s): %w", id, logFile.Name(), err)
	}
	bc.nodes = append(bc.nodes, n)
	bc.ids = append(bc.ids, id)
	return nil
}

// servedTimeout bounds the wait for the nodes to serve every partition:
// a lease for a dead node's partitions to be free, and then time to
// bring them back.
func (bc *benchCluster) servedTimeout() time.Duration {
	return 3*bc.env.Config.ClusterLease + 30*time.Second
}

// awaitServed waits until the partitions are shared out: every live node
// serves some, no two serve one, together they serve all, and the
// membership bucket names as each one's owner the node that serves it.
// The owner hands over everything a joining node should have in one pass,
// so a moment when all that holds is one when nothing is moving.
func (bc *benchCluster) awaitServed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, bc.servedTimeout())
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		why := bc.unserved(ctx)
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster's partitions were not shared out within %s: %s", bc.servedTimeout(), why)
		case <-t.C:
		}
	}
}

// unserved says why the partitions are not shared out yet; "" when they
// are.
func (bc *benchCluster) unserved(ctx context.Context) string {
	owners := make([]string, clusterPartitions)
	for i, n := range bc.nodes {
		count := 0
		for p := range clusterPartitions {
			if !n.Runtime().Serves(p) {
				continue
			}
			if owners[p] != "" {
				return fmt.Sprintf("partition %d is served by %s and %s", p, owners[p], bc.ids[i])
			}
			owners[p] = bc.ids[i]
			count++
		}
		if count == 0 {
			return fmt.Sprintf("node %s serves no partition", bc.ids[i])
		}
	}
	if p := slices.Index(owners, ""); p >= 0 {
		return fmt.Sprintf("nobody serves partition %d", p)
	}
	st, err := cluster.ReadStatus(ctx, bc.admin, clusterPrefix)
	if err != nil {
		return fmt.Sprintf("read the cluster's status: %v", err)
	}
	for _, o := range st.Owners {
		if o.Partition < len(owners) && o.Owner != owners[o.Partition] {
			return fmt.Sprintf("the bucket names %q the owner of partition %d, which %s serves", o.Owner, o.Partition, owners[o.Partition])
		}
	}
	return ""
}

// epochs reads each partition's epoch from the membership bucket: it
// changes with every move.
func (bc *benchCluster) epochs(ctx context.Context) ([]uint64, error) {
	st, err := cluster.ReadStatus(ctx, bc.admin, clusterPrefix)
	if err != nil {
		return nil, fmt.Errorf("read the cluster's status: %w", err)
	}
	out := make([]uint64, clusterPartitions)
	for _, o := range st.Owners {
		if o.Partition < len(out) {
			out[o.Partition] = o.Epoch
		}
	}
	return out, nil
}

// partitionOf is the log partition of agent id.
func partitionOf(id string) int { return jslog.Partition("agent/"+id, clusterPartitions) }

// owner is the live node serving agent id's partition, nil if none does.
func (bc *benchCluster) owner(id string) *node.Node {
	p := partitionOf(id)
	for _, n := range bc.nodes {
		if n.Runtime().Serves(p) {
			return n
		}
	}
	return nil
}

// startCounters starts a counter for each id on the node that serves its
// partition, several at a time.
func (bc *benchCluster) startCounters(ctx context.Context, ids []string) error {
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	for range min(startParallelism, len(ids)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				n := bc.owner(ids[i])
				if n == nil {
					fail(fmt.Errorf("start counter %s: no node serves its partition %d", ids[i], partitionOf(ids[i])))
					return
				}
				if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: ids[i]}); err != nil {
					fail(fmt.Errorf("start counter %s: %w", ids[i], err))
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// awaitVersions waits until the versions of the counters, each read on
// the node that serves it, add up to want (or versionsGrace ends) and
// returns the sum.
func (bc *benchCluster) awaitVersions(ctx context.Context, ids []string, want int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, versionsGrace)
	defer cancel()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		var sum int64
		var errs []error
		for _, id := range ids {
			n := bc.owner(id)
			if n == nil {
				errs = append(errs, fmt.Errorf("no node serves %s", id))
				continue
			}
			info, err := n.Runtime().State(id)
			if err != nil {
				errs = append(errs, fmt.Errorf("state of %s: %w", id, err))
				continue
			}
			sum += int64(info.Version)
		}
		if err := errors.Join(errs...); err != nil || sum >= want {
			return sum, err
		}
		select {
		case <-ctx.Done():
			return sum, nil
		case <-t.C:
		}
	}
}

// close shuts the nodes down together (so that none hands its partitions
// to another about to leave too), then the servers.
func (bc *benchCluster) close() error {
	errs := make([]error, len(bc.nodes))
	var wg sync.WaitGroup
	for i, n := range bc.nodes {
		wg.Go(func() {
			if err := shutdown(n); err != nil {
				errs[i] = fmt.Errorf("shut cluster node %s down: %w", bc.ids[i], err)
			}
		})
	}
	wg.Wait()
	bc.nodes, bc.ids = nil, nil
	if bc.admin != nil {
		bc.admin.Close()
	}
	bc.nats.Close()
	for _, f := range bc.logs {
		if err := f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

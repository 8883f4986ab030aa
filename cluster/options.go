package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultPrefix       = "jido"
	DefaultPartitions   = 64
	DefaultReplicas     = 3
	DefaultLeaseTimeout = 6 * time.Second
	// MinLeaseTimeout is the shortest lease Join accepts: below it a
	// renewal round trip to an R3 stream under load, or a leader
	// election, takes a good part of the lease.
	MinLeaseTimeout = 500 * time.Millisecond
)

// Options configure a Member. The zero value, with NodeID set, is the
// production layout: prefix "jido", 64 partitions, 3 replicas, a 6 s lease.
type Options struct {
	// Prefix names the bucket: <PREFIX>_CLUSTER, upper-cased as
	// eventlog/jslog's stream names are. Use the log's prefix.
	Prefix string
	// NodeID names this node in the cluster: one or more of
	// [A-Za-z0-9_-]. Two running nodes may not share one.
	NodeID string
	// Partitions is P. The first member to join writes it into the
	// bucket; a member with another P is refused (ErrConfigMismatch).
	// Zero means 64.
	Partitions int
	// Replicas of the bucket when Join creates it; the same R as the log.
	// Zero means 3. Fewer than 3 lose the ownership records with one
	// server's disk, so Join refuses them (and an existing bucket with
	// them) unless AllowFewerReplicas is set (development only).
	Replicas           int
	AllowFewerReplicas bool
	// LeaseTimeout is how long a node's heartbeat or a partition's lease
	// may stand unchanged before the others judge it dead, each on its
	// own clock. The holder renews every LeaseTimeout/4 and gives a
	// partition up locally once its last successful renewal is
	// LeaseTimeout/4 short of the timeout. Every node writes its own into
	// its records and the others wait the longer of theirs and its. Zero
	// means 6 s.
	LeaseTimeout time.Duration
	// OnAcquire is called when this node has taken partition p at epoch
	// (a larger epoch on every acquisition, cluster-wide): the node
	// catches the partition's agents up and starts deciding for them.
	// ctx ends when the Member is closed. An error means the node does
	// not take it: the Member releases it, logs the error and tries again
	// a lease timeout later. Nil means nothing to do.
	OnAcquire func(ctx context.Context, p int, epoch uint64) error
	// OnRelease is called when this node stops owning p, before the
	// partition is released to another node (a hand-over, Leave) or as
	// soon as its lease can no longer be renewed (the lease is running
	// out, or another node took it): the node stops deciding for p and
	// finishes its commits in flight (the log's fence refuses them if
	// another node has moved on). It is not called by Close, nor after a
	// failed OnAcquire. Calls of OnAcquire and OnRelease for one
	// partition never overlap; for different partitions they may run at
	// once.
	OnRelease func(p int)
	// OnMove is told of every change of ownership this Member makes or
	// suffers, once, on the member that made it (the node turns it into a
	// lifecycle signal). It is called from the Member's loop: it must not
	// block.
	OnMove func(Move)
	// Logger receives ownership changes (Info) and failures to reach the
	// bucket (Warn). Nil means no logging.
	Logger *slog.Logger

	// hooks are for this package's tests.
	hooks *testHooks
}

var validNodeID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func (o Options) withDefaults() (Options, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Partitions == 0 {
		o.Partitions = DefaultPartitions
	}
	if o.Replicas == 0 {
		o.Replicas = DefaultReplicas
	}
	if o.LeaseTimeout == 0 {
		o.LeaseTimeout = DefaultLeaseTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case !validNodeID.MatchString(o.NodeID):
		return o, fmt.Errorf("node id %q: want one or more of A-Z a-z 0-9 _ - (it is a key token in the cluster bucket); give --node-id", o.NodeID)
	case strings.ContainsAny(o.Prefix, ".*> \t\r\n"):
		return o, fmt.Errorf("prefix %q must be one subject token (no '.', '*', '>' or spaces)", o.Prefix)
	case o.Partitions < 0:
		return o, fmt.Errorf("%d partitions: want a positive number", o.Partitions)
	case o.Replicas < 1 || o.Replicas > 5:
		return o, fmt.Errorf("%d replicas: want 1 to 5 (3 for production)", o.Replicas)
	case o.LeaseTimeout < MinLeaseTimeout:
		return o, fmt.Errorf("lease timeout %s: want at least %s", o.LeaseTimeout, MinLeaseTimeout)
	}
	return o, nil
}

// renewEvery is how often the holder of a lease renews it.
func (o Options) renewEvery() time.Duration { return o.LeaseTimeout / 4 }

// fenceAfter is how long after the start of its last successful renewal
// a holder gives a lease up locally: a renewal interval before any other
// node may judge it expired, which covers a renewal in flight and the
// drift between two machines' clock rates.
func (o Options) fenceAfter() time.Duration { return o.LeaseTimeout - o.renewEvery() }

// opTimeout bounds one request to the bucket, so a server that does not
// answer holds the Member's loop for less than a renewal interval and a
// lease running out is noticed on time (Owns reads the clock itself, so
// routing never waits for the loop). It is three quarters of the
// interval, not less: a busy cluster answers a renewal slowly, and a
// renewal abandoned early is a lease lost for being busy.
func (o Options) opTimeout() time.Duration { return o.renewEvery() * 3 / 4 }

// testHooks let this package's tests freeze a member's renewals, as a
// process stopped by SIGSTOP or a long pause would.
type testHooks struct {
	pauseRenewals func() bool
}

package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/internal/goroutines"
)

// ErrDuplicateNode: a node with the same id is running.
var ErrDuplicateNode = errors.New("duplicate node id")

// Member is this node's membership of the cluster: it keeps the node's
// heartbeat, takes the partitions it should own, renews their leases,
// hands them over in order and gives them up when it cannot renew. Its
// methods are safe for concurrent use.
type Member struct {
	opts    Options
	kv      jetstream.KeyValue
	session string

	ctx     context.Context // ends at Close; OnAcquire's
	cancel  context.CancelFunc
	watch   jetstream.KeyWatcher
	group   goroutines.Group // the loop and the callbacks
	results chan callbackResult
	leaveCh chan struct{} // closed by Leave
	done    chan struct{} // closed when the loop has ended

	leaveOnce, closeOnce sync.Once

	// The loop changes these under mu; readers take mu.
	mu        sync.Mutex
	rec       nodeRecord // what the heartbeat writes
	view      *view
	held      map[int]*held
	backoff   map[int]time.Time // no acquisition of p before
	nodeRev   uint64
	nodeLease time.Time // start of the last successful heartbeat
	nextRenew time.Time
	leaving   bool
	err       error  // why the loop ended, when not by Leave or Close
	moves     []Move // reported, for flushMoves
}

// Join makes this node a member of the cluster nc is connected to:
// creates the bucket and the cluster configuration, or checks them
// (ErrConfigMismatch, *jslog.SettingError); claims the node id, refusing
// one that another running node holds (ErrDuplicateNode; a node id whose
// last run died is free once its heartbeat has stood still for a lease
// timeout, which Join waits for); and starts taking partitions. It returns
// before any partition is taken. The Member does not own nc.
func Join(ctx context.Context, nc *nats.Conn, opts Options) (*Member, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("join cluster: %w", err)
	}
	if o.Replicas < 3 && !o.AllowFewerReplicas {
		return nil, fmt.Errorf("join cluster: %d replicas: with fewer than 3 the loss of one server stops every lease; use 3, or allow fewer explicitly for development", o.Replicas)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("join cluster: %w", err)
	}
	kv, err := ensureBucket(ctx, js, o)
	if err != nil {
		return nil, fmt.Errorf("join cluster: %w", err)
	}
	if err := ensureConfig(ctx, kv, o); err != nil {
		return nil, fmt.Errorf("join cluster: %w", err)
	}
	host, _ := os.Hostname()
	m := &Member{
		opts:    o,
		kv:      kv,
		session: newSession(),
		results: make(chan callbackResult),
		leaveCh: make(chan struct{}),
		done:    make(chan struct{}),
		held:    map[int]*held{},
		backoff: map[int]time.Time{},
		rec: nodeRecord{ID: o.NodeID, Host: host, PID: os.Getpid(), Started: time.Now().UTC(),
			LeaseTimeoutMS: o.LeaseTimeout.Milliseconds()},
	}
	m.rec.Session = m.session
	if err := m.claimNodeID(ctx); err != nil {
		return nil, fmt.Errorf("join cluster: %w", err)
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if err := m.startWatch(ctx); err != nil {
		m.cancel()
		// Give the id back at once rather than leave a heartbeat the
		// others wait a lease timeout on.
		dctx, cancel := context.WithTimeout(context.Background(), o.opTimeout())
		kv.Delete(dctx, nodeKey(o.NodeID), jetstream.LastRevision(m.nodeRev))
		cancel()
		return nil, fmt.Errorf("join cluster: %w", err)
	}
	m.group.Go(m.run)
	return m, nil
}

func newSession() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// heartbeat is the node's record as written now. Called with mu held
// once the loop runs.
func (m *Member) heartbeat(now time.Time) []byte {
	r := m.rec
	r.Heartbeat = now.UTC()
	r.Recovering = nil
	for p, h := range m.held {
		if h.state == acquiring {
			r.Recovering = append(r.Recovering, p)
		}
	}
	slices.Sort(r.Recovering)
	b, _ := json.Marshal(r)
	return b
}

// claimNodeID writes the node's first heartbeat. A record already there is
// another run's under this id: alive if its revision changes within its
// lease timeout (refused), dead otherwise (taken over).
func (m *Member) claimNodeID(ctx context.Context) error {
	key := nodeKey(m.opts.NodeID)
	start := time.Now()
	rev, err := m.kv.Create(ctx, key, m.heartbeat(start))
	if err == nil {
		m.nodeRev, m.nodeLease = rev, start
		return nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("claim node id %s: %w", m.opts.NodeID, err)
	}
	w, err := m.kv.Watch(ctx, key)
	if err != nil {
		return fmt.Errorf("claim node id %s: %w", m.opts.NodeID, err)
	}
	defer w.Stop()
	var (
		last  jetstream.KeyValueEntry
		prev  nodeRecord
		timer <-chan time.Time
	)
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("claim node id %s: waited for its last run's heartbeat to stand still: %w", m.opts.NodeID, ctx.Err())
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return fmt.Errorf("claim node id %s: the watch of its record ended (connection closed)", m.opts.NodeID)
			case e == nil: // the record as it stands has been delivered
				if last == nil {
					// Deleted between Create and Watch: it left.
					return m.claimNodeID(ctx)
				}
				json.Unmarshal(last.Value(), &prev)
				timer = time.After(timeoutOf(prev.LeaseTimeoutMS, m.opts.LeaseTimeout))
			case last == nil:
				last = e
			case e.Revision() > last.Revision():
				if e.Operation() != jetstream.KeyValuePut {
					return m.claimNodeID(ctx) // it left meanwhile
				}
				json.Unmarshal(e.Value(), &prev)
				return fmt.Errorf("%w: node id %s is already running (pid %d on host %s, started %s); give each node its own --node-id",
					ErrDuplicateNode, m.opts.NodeID, prev.PID, prev.Host, prev.Started.Format(time.RFC3339))
			}
		case <-timer:
			// Its heartbeat stood still for a lease timeout: that run is
			// dead, and its partitions are the others' to take.
			start := time.Now()
			rev, err := m.kv.Update(ctx, key, m.heartbeat(start), last.Revision())
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				return fmt.Errorf("%w: node id %s was claimed by another node starting at the same time; give each node its own --node-id", ErrDuplicateNode, m.opts.NodeID)
			}
			if err != nil {
				return fmt.Errorf("claim node id %s: %w", m.opts.NodeID, err)
			}
			m.opts.Logger.Info("cluster: node id taken over from a run whose heartbeat stopped", "node", m.opts.NodeID,
				"pid", prev.PID, "host", prev.Host, "started", prev.Started)
			m.nodeRev, m.nodeLease = rev, start
			return nil
		}
	}
}

// startWatch watches the whole bucket and reads what it holds now into
// the view, so the loop's first decisions see every node and partition.
func (m *Member) startWatch(ctx context.Context) error {
	w, err := m.kv.WatchAll(m.ctx)
	if err != nil {
		return fmt.Errorf("watch bucket %s: %w", m.kv.Bucket(), err)
	}
	now := time.Now()
	m.view = newView(m.opts.Partitions, now)
	for {
		select {
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("read bucket %s: %w", m.kv.Bucket(), ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("read bucket %s: the watch ended (connection closed)", m.kv.Bucket())
			}
			if e == nil {
				m.watch = w
				// The heartbeat written by claimNodeID, if the watch
				// has not delivered it.
				m.view.setNode(m.opts.NodeID, m.nodeRev, true, m.rec, now)
				m.nextRenew = m.nodeLease.Add(m.opts.renewEvery())
				return nil
			}
			m.view.observe(e, now)
		}
	}
}

// Owns reports whether this node owns partition p now: it took it,
// OnAcquire returned, it has not begun to release it, and its lease is
// not running out (checked on this call, against the clock, so a paused
// loop does not leave it true). It is a hint for routing; the log's fence
// decides whether a commit is accepted.
func (m *Member) Owns(p int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[p]
	return h != nil && h.state == owned && time.Since(h.lease) < m.opts.fenceAfter()
}

// Owned is the partitions Owns reports true for, in order.
func (m *Member) Owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []int{}
	for p, h := range m.held {
		if h.state == owned && time.Since(h.lease) < m.opts.fenceAfter() {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Owner is partition p's owner and epoch as this member last saw the
// bucket; ok is false when it has none (vacant, or never taken).
func (m *Member) Owner(p int) (node string, epoch uint64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p < 0 || p >= len(m.view.parts) {
		return "", 0, false
	}
	pv := m.view.parts[p]
	return pv.rec.Owner, pv.rec.Epoch, pv.present && pv.rec.Owner != ""
}

// NodeID is this member's node id.
func (m *Member) NodeID() string { return m.opts.NodeID }

// Partitions is P.
func (m *Member) Partitions() int { return m.opts.Partitions }

// Done is closed when the Member has stopped: after Leave or Close, or on
// its own when it can no longer be a member (Err says why).
func (m *Member) Done() <-chan struct{} { return m.done }

// Err is why the Member stopped on its own (another run took its node id,
// or the connection was closed); nil while it runs and after Leave or
// Close.
func (m *Member) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Leave leaves the cluster in order: the node no longer takes partitions,
// marks itself leaving so the others take what it releases at once, calls
// OnRelease for each partition it owns and releases it, then deletes its
// heartbeat. It returns when all that is done, or when ctx ends (the
// partitions not yet released are then taken by the others when their
// leases run out). It stops the Member as Close does; calling it again
// returns at once.
func (m *Member) Leave(ctx context.Context) error {
	m.leaveOnce.Do(func() { close(m.leaveCh) })
	var err error
	select {
	case <-m.done:
	case <-ctx.Done():
		err = fmt.Errorf("leave cluster as %s: %w; the partitions not yet released move when their leases run out", m.opts.NodeID, ctx.Err())
	}
	m.Close()
	if err == nil {
		err = m.Err()
	}
	return err
}

// Close stops the Member without releasing anything and without calling
// OnRelease, as if the node had died: the others take its partitions when
// their leases run out. It waits for callbacks in flight to return.
func (m *Member) Close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		<-m.done
		m.watch.Stop()
		m.group.Wait()
	})
	return nil
}

// HandingOver reports whether p is being released in order (a hand-over
// to another node, Leave, a failed OnAcquire): while OnRelease runs the
// lease is still this node's, so what its agents had accepted may still
// be committed. False when the lease was lost or ran out: then this node
// must not write for p any more.
func (m *Member) HandingOver(p int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[p]
	return h != nil && h.state == releasing
}

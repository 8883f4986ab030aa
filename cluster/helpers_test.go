package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

var prefixes atomic.Int64

// newPrefix is a prefix no other test uses.
func newPrefix() string { return fmt.Sprintf("c%d", prefixes.Add(1)) }

// event is one callback, numbered by the recorder's own counter: the order
// of two events is the order of their numbers, never of clock readings.
type event struct {
	seq     int64
	node    string
	acquire bool
	p       int
	epoch   uint64
}

// recorder collects the callbacks and moves of every member of a test and
// checks, inside each OnAcquire, that no other member reports owning the
// partition.
type recorder struct {
	t       *testing.T
	mu      sync.Mutex
	seq     int64
	events  []event
	moves   []Move
	members map[string]*Member
	// active is, per partition, the member whose OnAcquire returned nil
	// and whose OnRelease has not returned.
	active map[int]string
	// releaseWork is how long each OnRelease works, as a node finishing
	// its commits in flight would: an implementation that released in the
	// bucket before OnRelease returned lets another acquire meanwhile.
	releaseWork time.Duration
	// failAcquire, when set, is asked whether an OnAcquire fails.
	failAcquire func(node string, p int) error
}

func newRecorder(t *testing.T) *recorder {
	return &recorder{t: t, members: map[string]*Member{}, active: map[int]string{}, releaseWork: 20 * time.Millisecond}
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	e.seq = r.seq
	r.events = append(r.events, e)
}

// options are the Options of member id, wired to the recorder.
func (r *recorder) options(prefix, id string, partitions int) Options {
	return Options{
		Prefix:     prefix,
		NodeID:     id,
		Partitions: partitions,
		Logger:     slog.New(slog.DiscardHandler),
		OnAcquire: func(_ context.Context, p int, epoch uint64) error {
			r.mu.Lock()
			others := make([]*Member, 0, len(r.members))
			for other, m := range r.members {
				if other != id {
					others = append(others, m)
				}
			}
			fail := r.failAcquire
			if holder, ok := r.active[p]; ok && holder != id {
				r.t.Errorf("%s acquires partition %d (epoch %d) before %s's OnRelease returned", id, p, epoch, holder)
			}
			r.mu.Unlock()
			for _, m := range others {
				if m.Owns(p) {
					r.t.Errorf("%s acquires partition %d (epoch %d) while %s owns it", id, p, epoch, m.NodeID())
				}
			}
			if fail != nil {
				if err := fail(id, p); err != nil {
					return err
				}
			}
			r.mu.Lock()
			r.active[p] = id
			r.mu.Unlock()
			r.add(event{node: id, acquire: true, p: p, epoch: epoch})
			return nil
		},
		OnRelease: func(p int) {
			time.Sleep(r.releaseWork)
			r.mu.Lock()
			if r.active[p] == id {
				delete(r.active, p)
			}
			r.mu.Unlock()
			r.add(event{node: id, p: p})
		},
		OnMove: func(m Move) {
			r.mu.Lock()
			r.moves = append(r.moves, m)
			r.mu.Unlock()
		},
	}
}

// join joins a member with o on its own connection and registers it; the
// test closes both when it ends.
func (r *recorder) join(o Options) *Member {
	r.t.Helper()
	m, err := r.tryJoin(o)
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *recorder) tryJoin(o Options) (*Member, error) {
	nc := connect(r.t)
	m, err := Join(r.t.Context(), nc, o)
	if err != nil {
		return nil, err
	}
	r.t.Cleanup(func() { m.Close() })
	r.mu.Lock()
	r.members[o.NodeID] = m
	r.mu.Unlock()
	return m, nil
}

func connect(t *testing.T) *nats.Conn {
	t.Helper()
	return cluster.Connect(t)
}

// kill closes m, as a node dying: what it held is no longer active.
func (r *recorder) kill(m *Member) {
	m.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, id := range r.active {
		if id == m.NodeID() {
			delete(r.active, p)
		}
	}
}

func (r *recorder) snapshot() ([]event, []Move) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events), slices.Clone(r.moves)
}

// ownersNow is, per partition, the members that report owning it.
func ownersNow(partitions int, ms ...*Member) [][]string {
	out := make([][]string, partitions)
	for _, m := range ms {
		for _, p := range m.Owned() {
			out[p] = append(out[p], m.NodeID())
		}
	}
	return out
}

// assigned reports nil once every partition is owned by exactly the
// member HRW names among ms.
func assigned(partitions int, ms ...*Member) error {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.NodeID()
	}
	slices.Sort(ids)
	owners := ownersNow(partitions, ms...)
	for p, o := range owners {
		want := desiredOwner(ids, p)
		if len(o) != 1 || o[0] != want {
			return fmt.Errorf("partition %d is owned by %v, want %s (all: %v)", p, o, want, owners)
		}
	}
	return nil
}

// lastEvent is the sequence number of the last event of node for p of
// the kind, or 0.
func lastEvent(events []event, node string, p int, acquire bool) int64 {
	var seq int64
	for _, e := range events {
		if e.node == node && e.p == p && e.acquire == acquire {
			seq = e.seq
		}
	}
	return seq
}

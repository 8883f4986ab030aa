package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// run is the Member's loop, the only writer of its state and of the
// bucket. It wakes on every watched change, every callback's return, Leave
// and a tick a quarter of a renewal interval long, and each time gives up
// what its leases no longer cover, renews when due, and takes or releases
// what the assignment says.
func (m *Member) run() {
	defer close(m.done)
	tick := time.NewTicker(m.opts.renewEvery() / 4)
	defer tick.Stop()
	leaveCh := m.leaveCh
	for {
		select {
		case <-m.ctx.Done():
			return
		case e, ok := <-m.watch.Updates():
			if !ok {
				m.stop(errors.New("the watch of the cluster bucket ended: the NATS connection was closed"))
				m.flushMoves()
				return
			}
			m.observe(e)
		case r := <-m.results:
			m.mu.Lock()
			m.finished(r)
			m.mu.Unlock()
		case <-leaveCh:
			leaveCh = nil
			m.mu.Lock()
			m.leaving, m.rec.Leaving = true, true
			m.nextRenew = time.Now() // tell the others at once
			m.mu.Unlock()
		case <-tick.C:
		}
		m.step()
		m.flushMoves()
		if m.stopped() || m.leaveDone() {
			return
		}
	}
}

// step is one pass of the loop after it woke.
func (m *Member) step() {
	m.fence()
	if m.opts.hooks != nil && m.opts.hooks.pauseRenewals != nil && m.opts.hooks.pauseRenewals() {
		return
	}
	m.mu.Lock()
	due := !time.Now().Before(m.nextRenew)
	m.mu.Unlock()
	if due {
		m.renew()
		m.fence()
	}
	if !m.stopped() {
		m.decide()
	}
}

func (m *Member) stopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err != nil
}

// stop ends the membership on the member's own: every partition is given
// up locally. Called without mu.
func (m *Member) stop(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	m.err = err
	m.opts.Logger.Error("cluster: membership ended", "node", m.opts.NodeID, "err", err)
	for p, h := range m.held {
		m.drop(p, h, MoveFenced)
	}
}

// fence gives up locally every partition whose lease has not been renewed
// for fenceAfter: the others may take it a renewal interval later.
func (m *Member) fence() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for p, h := range m.held {
		if h.leased() && now.Sub(h.lease) >= m.opts.fenceAfter() {
			m.opts.Logger.Warn("cluster: lease not renewed in time; partition given up locally",
				"partition", p, "epoch", h.epoch, "node", m.opts.NodeID, "last_renewed_ago", now.Sub(h.lease))
			m.drop(p, h, MoveFenced)
		}
	}
}

// observe records a watched change, and acts on what it says of this
// member: another run under its node id (stop), a partition it holds
// written by another node (lost).
func (m *Member) observe(e jetstream.KeyValueEntry) {
	if e == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	node, p, isNode, changed := m.view.observe(e, time.Now())
	if !changed {
		return
	}
	if isNode {
		if node == m.opts.NodeID {
			m.ownNodeChanged(m.view.nodes[node])
		}
		return
	}
	h := m.held[p]
	if h == nil || !h.leased() || e.Revision() <= h.rev {
		return
	}
	if m.isOurs(m.view.parts[p]) && m.view.parts[p].rec.Epoch == h.epoch {
		// A write of ours whose acknowledgement was lost.
		h.rev = e.Revision()
		return
	}
	m.drop(p, h, MoveLost)
}

func (m *Member) isOurs(pv partView) bool {
	return pv.present && pv.rec.Owner == m.opts.NodeID && pv.rec.Session == m.session
}

// ownNodeChanged checks a newer revision of this node's own record: one
// written by another run under the same id ends this membership. Called
// with mu held.
func (m *Member) ownNodeChanged(n *nodeView) {
	if n.rev <= m.nodeRev {
		return
	}
	if n.present && n.rec.Session != m.session {
		m.err = fmt.Errorf("%w: another run of node %s (pid %d on host %s) took its id, judging this one dead; give each node its own --node-id",
			ErrDuplicateNode, m.opts.NodeID, n.rec.PID, n.rec.Host)
		m.opts.Logger.Error("cluster: membership ended", "node", m.opts.NodeID, "err", m.err)
		for p, h := range m.held {
			m.drop(p, h, MoveFenced)
		}
		return
	}
	// Our own write, seen before its acknowledgement or instead of it
	// (or the record deleted by hand: the next heartbeat writes it
	// again).
	m.nodeRev = n.rev
}

// leaveDone reports whether Leave's work is done, and if so deletes the
// node's record.
func (m *Member) leaveDone() bool {
	m.mu.Lock()
	if !m.leaving || len(m.held) > 0 {
		m.mu.Unlock()
		return false
	}
	for _, pv := range m.view.parts {
		if pv.present && pv.rec.Owner == m.opts.NodeID {
			m.mu.Unlock()
			return false
		}
	}
	rev := m.nodeRev
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.opTimeout())
	defer cancel()
	if err := m.kv.Delete(ctx, nodeKey(m.opts.NodeID), jetstream.LastRevision(rev)); err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			m.refresh(nodeKey(m.opts.NodeID))
		}
		m.opts.Logger.Warn("cluster: leaving: could not delete the node's record; trying again", "node", m.opts.NodeID, "err", err)
		return false
	}
	m.opts.Logger.Info("cluster: left", "node", m.opts.NodeID)
	return true
}

// refresh reads key and records it in the view, after a write conditional
// on a revision was refused: the watch was behind. The read may come from
// a replica that is behind too; the view keeps the newest revision.
func (m *Member) refresh(key string) {
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.opTimeout())
	defer cancel()
	e, err := m.kv.Get(ctx, key)
	if err != nil {
		return
	}
	m.observe(e)
}

// write writes data under key if the key's revision is rev (0: absent),
// and returns the new revision and when the write began (a lease runs from
// then). A refused condition is errConflict.
func (m *Member) write(key string, data []byte, rev uint64, create bool) (uint64, time.Time, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.opTimeout())
	defer cancel()
	var (
		n   uint64
		err error
	)
	if create {
		n, err = m.kv.Create(ctx, key, data)
	} else {
		n, err = m.kv.Update(ctx, key, data, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		err = fmt.Errorf("%w: %w", errConflict, err)
	}
	return n, start, err
}

var errConflict = errors.New("the record changed since it was read")

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only records of this package, which always encode
	}
	return b
}

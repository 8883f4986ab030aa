package cluster

import (
	"errors"
	"slices"
	"time"
)

// action is one write decide plans: take partition p (epoch+1, owner this
// node) or release it (owner "", epoch kept).
type action struct {
	p       int
	take    bool
	create  bool   // the key has never been written
	rev     uint64 // the revision the write is conditional on
	from    string
	epoch   uint64 // after the write
	reason  MoveReason
	heldRel bool // the release of a held partition (else of a record naming this node that it does not hold)
}

// decide compares what the member holds with what the assignment wants and
// acts: hands over what another live node should own (OnRelease first),
// releases what OnRelease or a failed OnAcquire has finished with, takes
// vacant partitions and those whose owner's lease ran out when this node
// should own them (or when nobody has taken them for a lease timeout), and
// takes again or releases partitions the bucket names it the owner of
// without its holding them. The writes are conditional on the revision
// seen, so a view that is behind costs a refused write, never a partition
// owned twice. A write that fails otherwise (the servers do not answer)
// ends the pass: the next tick tries again.
func (m *Member) decide() {
	acts := m.plan()
	for _, a := range acts {
		if m.fenceDue() {
			m.fence()
		}
		if !m.execute(a) {
			return
		}
	}
}

func (m *Member) fenceDue() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for _, h := range m.held {
		if h.leased() && now.Sub(h.lease) >= m.opts.fenceAfter() {
			return true
		}
	}
	return false
}

// plan decides, under mu, what to write. It starts OnRelease for the
// partitions to hand over (their writes come once it returns).
func (m *Member) plan() []action {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	self, lt := m.opts.NodeID, m.opts.LeaseTimeout
	live := m.view.liveNodes(self, lt, now)
	if !m.leaving {
		live = append(live, self)
		slices.Sort(live)
	}
	// Take nothing on a heartbeat the others may be about to judge dead.
	mayTake := !m.leaving && now.Sub(m.nodeLease) < m.opts.fenceAfter()
	var acts []action
	for p := range m.opts.Partitions {
		desired := desiredOwner(live, p)
		if h := m.held[p]; h != nil {
			if h.busy {
				continue
			}
			if h.state == owned && (m.leaving || desired != self) {
				h.state, h.reason = releasing, MoveHandOver
				if m.leaving {
					h.reason = MoveLeave
				}
				m.startRelease(p, h)
			}
			if h.state == releasing && !h.busy {
				acts = append(acts, action{p: p, rev: h.rev, epoch: h.epoch, reason: h.reason, heldRel: true})
			}
			continue
		}
		if now.Before(m.backoff[p]) {
			continue
		}
		pv := m.view.parts[p]
		switch {
		case pv.present && pv.rec.Owner == self:
			// The bucket names this node, which does not hold it: a run
			// before this one, a lease this run gave up locally, or an
			// acknowledgement lost. The id is this run's alone (Join saw
			// to it), so taking it again or releasing it is safe.
			if mayTake && desired == self {
				acts = append(acts, action{p: p, take: true, rev: pv.rev, from: self, epoch: pv.rec.Epoch + 1, reason: MoveAdopted})
			} else if m.leaving || desired != self {
				acts = append(acts, action{p: p, rev: pv.rev, epoch: pv.rec.Epoch, from: self, reason: MoveHandOver})
			}
		case !mayTake:
		case !pv.present || pv.rec.Owner == "":
			if desired == self || now.Sub(pv.changed) > lt {
				acts = append(acts, action{p: p, take: true, create: !pv.present && pv.rev == 0, rev: pv.rev, epoch: pv.rec.Epoch + 1, reason: MoveTaken})
			}
		default:
			if exp := m.view.expiredFor(p, lt, now); exp > 0 && (desired == self || exp > lt) {
				acts = append(acts, action{p: p, take: true, rev: pv.rev, from: pv.rec.Owner, epoch: pv.rec.Epoch + 1, reason: MoveFailover})
			}
		}
	}
	return acts
}

// execute makes one planned write; false means the servers did not answer
// and the pass should end.
func (m *Member) execute(a action) bool {
	key := partitionKey(a.p)
	rec := partitionRecord{Since: time.Now().UTC(), Epoch: a.epoch}
	if a.take {
		rec.Owner, rec.Session, rec.LeaseTimeoutMS = m.opts.NodeID, m.session, m.opts.LeaseTimeout.Milliseconds()
	}
	data := mustJSON(rec)
	n, start, err := m.write(key, data, a.rev, a.create)
	if errors.Is(err, errConflict) {
		m.refresh(key)
		if a.heldRel {
			// Another node wrote it first: the partition is gone, and
			// OnRelease has returned.
			m.mu.Lock()
			delete(m.held, a.p)
			m.mu.Unlock()
		}
		return true
	}
	if err != nil {
		m.opts.Logger.Warn("cluster: write failed; trying again", "key", key, "node", m.opts.NodeID, "err", err)
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.view.setPartition(a.p, n, true, rec, time.Now())
	if !a.take {
		delete(m.held, a.p)
		m.report(Move{Partition: a.p, From: m.opts.NodeID, Epoch: a.epoch, Reason: a.reason})
		return true
	}
	h := &held{state: acquiring, rev: n, epoch: a.epoch, data: data, lease: start}
	m.held[a.p] = h
	m.report(Move{Partition: a.p, From: a.from, To: m.opts.NodeID, Epoch: a.epoch, Reason: a.reason})
	m.startAcquire(a.p, h)
	return true
}

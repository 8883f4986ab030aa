package cluster

import (
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// renewal is one write of a renewal round: the node's heartbeat (p < 0)
// or a held partition's lease.
type renewal struct {
	p     int
	key   string
	data  []byte
	rev   uint64
	n     uint64
	start time.Time
	err   error
}

// renew rewrites the node's heartbeat and every lease the member holds,
// all at once, each conditional on the revision last written, so that a
// lease another node has taken is not written over. A lease runs from the
// start of its last successful renewal.
func (m *Member) renew() {
	m.mu.Lock()
	now := time.Now()
	jobs := []*renewal{{p: -1, key: nodeKey(m.opts.NodeID), data: m.heartbeat(now), rev: m.nodeRev}}
	for p, h := range m.held {
		if h.leased() {
			jobs = append(jobs, &renewal{p: p, key: partitionKey(p), data: h.data, rev: h.rev})
		}
	}
	m.nextRenew = now.Add(m.opts.renewEvery())
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { j.n, j.start, j.err = m.write(j.key, j.data, j.rev, false) })
	}
	wg.Wait()

	var conflicts []string
	m.mu.Lock()
	for _, j := range jobs {
		switch {
		case j.err == nil && j.p < 0:
			m.nodeRev, m.nodeLease = max(m.nodeRev, j.n), j.start
			var rec nodeRecord
			if json.Unmarshal(j.data, &rec) == nil {
				m.view.setNode(m.opts.NodeID, j.n, true, rec, time.Now())
			}
		case j.err == nil:
			if h := m.held[j.p]; h != nil && h.leased() {
				h.rev, h.lease = max(h.rev, j.n), j.start
				var rec partitionRecord
				if json.Unmarshal(j.data, &rec) == nil {
					m.view.setPartition(j.p, j.n, true, rec, time.Now())
				}
			}
		case errors.Is(j.err, errConflict):
			conflicts = append(conflicts, j.key)
		default:
			m.opts.Logger.Warn("cluster: renewal failed; trying again", "key", j.key, "node", m.opts.NodeID, "err", j.err)
		}
	}
	m.mu.Unlock()
	// A refused renewal: either the member's own write whose
	// acknowledgement was lost (observe adopts it) or another's (observe
	// ends the lease, or the membership).
	for _, key := range conflicts {
		m.refresh(key)
	}
}

package cluster

import (
	"time"
)

// holdState is where a partition this member has taken stands.
type holdState int

const (
	// acquiring: the bucket names this member; OnAcquire runs.
	acquiring holdState = iota
	// owned: the bucket names this member; OnAcquire returned nil.
	owned
	// releasing: the bucket names this member; OnRelease runs (busy) or
	// has returned, and the release in the bucket comes next.
	releasing
	// dropping: the lease is no longer this member's to write (it ran
	// out, or another node took the partition); a callback still runs.
	dropping
)

// held is a partition this member has taken and not yet let go of.
type held struct {
	state holdState
	rev   uint64 // the revision of the member's last write of the record
	epoch uint64
	data  []byte    // the record written, written again by each renewal
	lease time.Time // start of the last successful write: the lease runs from it
	busy  bool      // a callback runs
	// acquired: OnAcquire returned nil (so OnRelease is owed).
	acquired bool
	// reason of the release under way.
	reason MoveReason
}

// leased reports whether the member still renews h's lease.
func (h *held) leased() bool { return h.state != dropping }

// callbackResult is a callback's return, sent to the loop.
type callbackResult struct {
	p       int
	acquire bool // OnAcquire (else OnRelease)
	err     error
}

// startAcquire runs OnAcquire for p on a goroutine of the member's group.
func (m *Member) startAcquire(p int, h *held) {
	if m.opts.OnAcquire == nil {
		h.acquired = true
		if h.state == acquiring {
			h.state = owned
		}
		return
	}
	h.busy = true
	epoch := h.epoch
	m.group.Go(func() {
		err := m.opts.OnAcquire(m.ctx, p, epoch)
		m.deliver(callbackResult{p: p, acquire: true, err: err})
	})
}

// startRelease runs OnRelease for p, when OnAcquire had returned nil.
func (m *Member) startRelease(p int, h *held) {
	if !h.acquired || m.opts.OnRelease == nil {
		h.acquired = false
		return
	}
	h.busy = true
	m.group.Go(func() {
		m.opts.OnRelease(p)
		m.deliver(callbackResult{p: p})
	})
}

func (m *Member) deliver(r callbackResult) {
	select {
	case m.results <- r:
	case <-m.done:
	}
}

// finished moves p on once its callback has returned. Called with mu held.
func (m *Member) finished(r callbackResult) {
	h := m.held[r.p]
	if h == nil {
		return
	}
	h.busy = false
	if !r.acquire {
		h.acquired = false
		if h.state == dropping {
			delete(m.held, r.p)
		}
		return
	}
	if r.err != nil {
		m.opts.Logger.Warn("cluster: OnAcquire failed; releasing the partition, to be tried again after a lease timeout",
			"partition", r.p, "epoch", h.epoch, "node", m.opts.NodeID, "err", r.err)
		m.backoff[r.p] = time.Now().Add(m.opts.LeaseTimeout)
		switch h.state {
		case dropping:
			delete(m.held, r.p)
		default:
			h.state, h.reason = releasing, MoveAcquireFailed
		}
		return
	}
	h.acquired = true
	switch h.state {
	case acquiring:
		h.state = owned
	case dropping:
		// The lease ran out while OnAcquire ran: the node took it, so it
		// is told to stop.
		m.startRelease(r.p, h)
		if !h.busy {
			delete(m.held, r.p)
		}
	}
}

// drop gives p up locally: the lease is no longer the member's (it ran
// out, or another node wrote the record). Called with mu held.
func (m *Member) drop(p int, h *held, reason MoveReason) {
	wasOwned := h.state == owned || h.state == acquiring
	h.state = dropping
	if !h.busy {
		m.startRelease(p, h)
	}
	if !h.busy {
		delete(m.held, p)
	}
	if wasOwned || reason == MoveLost {
		to := ""
		if reason == MoveLost {
			to = m.view.parts[p].rec.Owner
		}
		m.report(Move{Partition: p, From: m.opts.NodeID, To: to, Epoch: h.epoch, Reason: reason})
	}
}

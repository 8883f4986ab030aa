package cluster

// Move is one change of a partition's ownership, as the member that made
// it (or suffered it) saw it.
type Move struct {
	Partition int
	// From and To are node ids; "" is nobody (a release, or a vacant
	// partition taken).
	From, To string
	// Epoch is the partition's epoch after the move.
	Epoch  uint64
	Reason MoveReason
}

// MoveReason says why a partition moved.
type MoveReason string

const (
	// MoveTaken: this node took a vacant partition.
	MoveTaken MoveReason = "taken"
	// MoveFailover: this node took a partition whose owner's lease had
	// run out.
	MoveFailover MoveReason = "failover"
	// MoveAdopted: this node took again a partition the bucket still
	// named it the owner of (after its lease ran out locally, or from an
	// earlier run under the same node id).
	MoveAdopted MoveReason = "adopted"
	// MoveHandOver: this node released a partition another live node
	// should own.
	MoveHandOver MoveReason = "hand-over"
	// MoveLeave: this node released a partition because it is leaving.
	MoveLeave MoveReason = "leave"
	// MoveAcquireFailed: OnAcquire failed and the partition was released.
	MoveAcquireFailed MoveReason = "acquire-failed"
	// MoveFenced: this node gave a partition up locally because it could
	// not renew its lease in time; the bucket still names it until
	// another node takes the partition.
	MoveFenced MoveReason = "fenced"
	// MoveLost: another node took a partition this node held.
	MoveLost MoveReason = "lost"
)

// report queues mv for flushMoves. Called with mu held.
func (m *Member) report(mv Move) { m.moves = append(m.moves, mv) }

// flushMoves logs the moves reported and tells OnMove, outside mu so that
// OnMove may ask the Member anything.
func (m *Member) flushMoves() {
	m.mu.Lock()
	moves := m.moves
	m.moves = nil
	m.mu.Unlock()
	for _, mv := range moves {
		m.opts.Logger.Info("cluster: partition moved", "partition", mv.Partition, "epoch", mv.Epoch,
			"from", mv.From, "to", mv.To, "reason", string(mv.Reason), "node", m.opts.NodeID)
		if m.opts.OnMove != nil {
			m.opts.OnMove(mv)
		}
	}
}

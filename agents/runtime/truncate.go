package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Truncating a stream (eventlog.Log.TruncateBefore) removes its oldest
// entries. For an agent's stream that is safe only when recovery does not
// need them: recovery starts from the agent's snapshot, replays what
// follows it, and re-runs the directives the snapshot notes as pending
// (PendingFrom). The started record, the stream's first entry, is
// carried by every snapshot, so it may go too. The runtime's own streams
// (IndexStream above all) must never be truncated.

// ReasonTruncateRefused is the machine word of a truncation refused
// because it would lose what recovery needs.
const ReasonTruncateRefused = "truncate_refused"

// TruncateStore is what CheckTruncate reads: a Store that describes its
// streams; *eventlog.Log is one.
type TruncateStore interface {
	Store
	Stream(stream string) (eventlog.StreamInfo, error)
}

// CheckTruncate reports whether removing the entries of stream below
// before keeps what recovery needs, reading only the log (no runtime
// needs to run): streams under "runtime/" are refused; an agent's stream
// (one the index lists) needs a snapshot at or after the cut that carries
// the agent's started record and no pending decision below the cut. The
// error is a *bus.Error of type ReasonTruncateRefused that says what to
// do instead, or the log's error (not_found for an unknown stream).
func CheckTruncate(store TruncateStore, stream string, before uint64) error {
	return checkTruncateIn(store, IndexStream, stream, before)
}

// checkTruncateIn is CheckTruncate with the agent of stream listed in the
// index stream index: in a cluster each partition has its own
// (Partitions.Index), and reading another would find no agent and let
// any cut through.
func checkTruncateIn(store TruncateStore, index, stream string, before uint64) error {
	if strings.HasPrefix(stream, "runtime/") {
		what := "it is the runtime's own bookkeeping"
		if stream == IndexStream || strings.HasPrefix(stream, IndexStream+"/") {
			what = "it lists the agents recovery brings back: every agent would be lost at the next start"
		}
		return bus.Errorf(ReasonTruncateRefused, "%s cannot be truncated: %s; stop agents you no longer need (jido-bus agent stop) instead", stream, what)
	}
	info, err := store.Stream(stream)
	if err != nil {
		return err
	}
	cut := min(before, info.Head+1)
	if cut <= info.First {
		return nil // nothing goes
	}
	id, born, live, err := agentOfStream(store, index, stream)
	if err != nil || !live {
		return err
	}
	// Entries of earlier incarnations are never read again.
	keep := max(safeCut(store, stream), born)
	if cut <= keep {
		return nil
	}
	msg := fmt.Sprintf("agent %s recovers from %s and needs its entries from seq %d on", id, stream, keep)
	if keep <= info.First {
		msg = fmt.Sprintf("agent %s recovers from %s and needs every entry it has (from seq %d): no snapshot of it covers any of them", id, stream, info.First)
	}
	return bus.Errorf(ReasonTruncateRefused, "%s; start the node and truncate through it (it snapshots the agent first), or cut at or before seq %d",
		msg, max(keep, info.First))
}

// safeCut is the highest sequence stream may be truncated below and the
// agent still recover: one past its snapshot, or the first decision the
// snapshot notes as pending; 1 when it has no usable snapshot.
func safeCut(store Store, stream string) uint64 {
	snap, err := store.LoadSnapshot(stream)
	if err != nil {
		return 1
	}
	var data snapshot
	if json.Unmarshal(snap.Data, &data) != nil || data.Started == nil {
		return 1
	}
	keep := snap.Version + 1
	if data.PendingFrom != 0 {
		keep = min(keep, data.PendingFrom)
	}
	return keep
}

// agentOfStream folds the index to find the agent, started and not
// stopped, whose stream is stream, and the sequence its incarnation was
// started at.
func agentOfStream(store Store, index, stream string) (id string, born uint64, live bool, err error) {
	registered := map[string]bool{} // agent id → registered
	byStream := ""
	for e, err := range store.ReadStream(index, eventlog.ReadOptions{}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			break
		}
		if err != nil {
			return "", 0, false, fmt.Errorf("read %s: %w", index, err)
		}
		var rec indexRecord
		if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
			return "", 0, false, fmt.Errorf("%s entry %d: %w", index, e.Seq, err)
		}
		switch e.Event.Type() {
		case TypeRegistered:
			registered[rec.ID] = true
			if rec.Stream == stream {
				byStream, born = rec.ID, max(rec.Seq, 1)
			}
		case TypeDeregistered:
			delete(registered, rec.ID)
		}
	}
	return byStream, born, byStream != "" && registered[byStream], nil
}

// startedFromSnapshot is readStarted for a stream truncated past its
// started entry (its first entry is now at first).
func startedFromSnapshot(store Store, stream string, first uint64) (startedRecord, error) {
	snap, err := store.LoadSnapshot(stream)
	if err != nil {
		return startedRecord{}, fmt.Errorf("%s was truncated below seq %d and its snapshot cannot be read: %w", stream, first, err)
	}
	var data snapshot
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		return startedRecord{}, fmt.Errorf("%s was truncated below seq %d; its snapshot: %w", stream, first, err)
	}
	if data.Started == nil || snap.Version+1 < first {
		return startedRecord{}, fmt.Errorf("%s was truncated below seq %d, past what its snapshot (at seq %d) covers: the agent cannot be restored", stream, first, snap.Version)
	}
	return *data.Started, nil
}

// PrepareTruncate makes the truncation of stream below before safe for the
// agent that recovers from it, if any: when its snapshot does not already
// cover the cut, the agent is snapshotted at its head (it goes passive,
// as it would when idle, and its next signal brings it back). It waits
// for the agent to finish what it is doing, until ctx ends. With dryRun it
// changes nothing and reports whether the truncation could go ahead. Then
// CheckTruncate has the last word.
func (rt *Runtime) PrepareTruncate(ctx context.Context, stream string, before uint64, dryRun bool) error {
	store, ok := rt.cfg.Store.(TruncateStore)
	if !ok {
		return errors.New("runtime: the store cannot describe its streams")
	}
	index := rt.indexFor(stream)
	err := checkTruncateIn(store, index, stream, before)
	if bus.ErrorType(err) != ReasonTruncateRefused || strings.HasPrefix(stream, "runtime/") {
		return err
	}
	id := rt.agentWithStream(stream)
	if id == "" {
		return err // not running here: nothing can be snapshotted
	}
	if dryRun {
		return nil // a snapshot first would let it go ahead
	}
	for {
		s, lerr := rt.lookup(id)
		if lerr != nil {
			return fmt.Errorf("truncate %s: %w", stream, lerr)
		}
		if s.passivate(rt.cfg.Now(), true) {
			break
		}
		// Busy: wait for its next change, then try again.
		select {
		case <-s.changedChan():
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return bus.Errorf(ReasonTruncateRefused, "truncate %s: agent %s stayed busy (%v); try again when it is idle", stream, id, ctx.Err())
		}
	}
	return checkTruncateIn(store, index, stream, before)
}

// agentWithStream returns the id of the agent, active or passive, whose
// stream is stream, or "".
func (rt *Runtime) agentWithStream(stream string) string {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	for id, s := range rt.agents {
		if s.stream == stream {
			return id
		}
	}
	for id, p := range rt.passive {
		if rt.streamFor(rt.typeName(p.typ), id) == stream {
			return id
		}
	}
	return ""
}

// startedFromSnapshotAt is startedFromSnapshot for the incarnation born:
// a snapshot taken before born belongs to an earlier incarnation and
// cannot stand in for this one's started record.
func startedFromSnapshotAt(store Store, stream string, first, born uint64) (startedRecord, error) {
	if snap, err := store.LoadSnapshot(stream); err == nil && snap.Version < born {
		return startedRecord{}, fmt.Errorf("%s was truncated below seq %d; its snapshot (at seq %d) is of an incarnation before the one started at seq %d: the agent cannot be restored", stream, first, snap.Version, born)
	}
	rec, err := startedFromSnapshot(store, stream, first)
	if err != nil {
		return startedRecord{}, err
	}
	rec.seq = born
	return rec, nil
}

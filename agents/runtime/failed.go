package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Agents that failed at recovery. Recovery never loses an agent silently:
// one the index lists as running that cannot be rebuilt from its stream
// (an entry it cannot decode, a decision that does not follow its signal,
// a stream that does not begin with the incarnation's started record, a
// type this runtime does not register) is held as failed, with a reason
// naming the stream and sequence. State and List show it (status
// "failed"), Counts counts it, and its id stays taken — Start refuses it —
// until Stop closes its incarnation in the log.

// failedAgent is an agent that failed at recovery.
type failedAgent struct {
	typ    string
	stream string
	born   uint64 // its incarnation (incarnation.go)
	reason string
}

func (f failedAgent) info(id string) Info {
	return Info{ID: id, Type: f.typ, Stream: f.stream, Status: StatusFailed, Reason: "failed at recovery: " + f.reason}
}

// refuseTaken refuses a start under id while this runtime holds an agent
// of that id, running, passive or failed at recovery.
func (rt *Runtime) refuseTaken(id string) error {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.refuseTakenLocked(id)
}

// refuseTakenLocked is refuseTaken; rt.mu is held.
func (rt *Runtime) refuseTakenLocked(id string) error {
	if f, ok := rt.failed[id]; ok {
		return bus.Errorf(ReasonAlreadyExists, "agent %q failed at recovery (%s); stop it to close its stream %s, then its id can be started again", id, f.reason, f.stream)
	}
	if rt.registered(id) {
		return bus.Errorf(ReasonAlreadyExists, "an agent %q is already running; stop it first or choose another id", id)
	}
	return nil
}

// stopFailed stops an agent that failed at recovery: a stopped record
// closes its stream (where its head can be read) in the batch that
// deregisters it, and its id is free again. A stream that is gone gets
// just that stopped record, so the next start under the id is a new
// incarnation whose records cannot repeat the lost one's ids.
func (rt *Runtime) stopFailed(ctx context.Context, id, reason string) error {
	rt.mu.RLock()
	f, ok := rt.failed[id]
	rt.mu.RUnlock()
	if !ok {
		return bus.Errorf(bus.ReasonNotFound, "no agent %q is running", id)
	}
	now := rt.now()
	dereg, err := record(TypeDeregistered, incarnationID("deregistered", id, f.born), id, now, indexRecord{ID: id, Reason: reason, Seq: f.born})
	if err != nil {
		return err
	}
	stopped, err := record(TypeStopped, incarnationID("stopped", id, f.born), id, now, stoppedRecord{Reason: reason})
	if err != nil {
		return err
	}
	parts := []eventlog.StreamAppend{{Stream: rt.indexFor(f.stream), Events: []bus.Signal{dereg}}}
	closeStream := eventlog.StreamAppend{Stream: f.stream, Expected: eventlog.NoStream, Events: []bus.Signal{stopped}}
	for e, err := range rt.cfg.Store.ReadStream(f.stream, eventlog.ReadOptions{Backward: true, Limit: 1}) {
		switch {
		case errors.Is(err, eventlog.ErrNotFound):
		case err != nil:
			rt.log.Warn("stop failed agent: its stream's head is unreadable; deregistering only", "agent", id, "stream", f.stream, "err", err)
			closeStream.Events = nil
		case e.Event.Type() == TypeStopped:
			closeStream.Events = nil
		default:
			closeStream.Expected = eventlog.ExactVersion(e.Seq)
		}
		break
	}
	if closeStream.Events != nil {
		parts = append(parts, closeStream)
	}
	if _, err := rt.cfg.Store.AppendMulti(ctx, parts); err != nil {
		return fmt.Errorf("stop failed agent %s: commit: %w", id, err)
	}
	rt.mu.Lock()
	delete(rt.failed, id)
	rt.mu.Unlock()
	rt.log.Info("failed agent stopped", "agent", id, "stream", f.stream, "reason", reason)
	return nil
}

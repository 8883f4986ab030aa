package runtime

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Incarnations. An agent stopped and started again under the same id
// continues the same stream: each start opens an incarnation with a
// started record, each stop closes it with a stopped record, and only the
// last incarnation is ever restored. An incarnation is named by the stream
// sequence of its started record ("born"), which the log itself fixes, so
// every id derived from it comes out the same when recovery or a replay
// derives it again.
//
// The runtime's records and lifecycle signals carry ids the log
// deduplicates on (source and id, per stream): without the incarnation in
// them, the second start's records would repeat the first's ids and be
// dropped as duplicates — the agent would run, unregistered, and vanish at
// the next restart.

// incarnationID names a record or lifecycle signal about agent id's
// incarnation born: "<what>:<id>" for the first incarnation (as records
// written before incarnations existed are named), "<what>:<id>@<born>"
// after it.
func incarnationID(what, id string, born uint64) string {
	if born <= 1 {
		return what + ":" + id
	}
	return what + ":" + id + "@" + strconv.FormatUint(born, 10)
}

// nextIncarnation returns where agent id's next incarnation starts in
// stream: the version to expect and the sequence its started record will
// have. A stream that does not exist starts at 1; one whose last entry is
// a stopped record continues after it; any other stream belongs to an
// incarnation that was never stopped (running here or elsewhere, or failed
// at recovery), and a start under its id is refused as already_exists.
func (rt *Runtime) nextIncarnation(id, stream string) (eventlog.ExpectedVersion, uint64, error) {
	for e, err := range rt.cfg.Store.ReadStream(stream, eventlog.ReadOptions{Backward: true, Limit: 1}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("start agent %s: read the head of %s: %w", id, stream, err)
		}
		if e.Event.Type() != TypeStopped {
			return 0, 0, bus.Errorf(ReasonAlreadyExists,
				"agent %q was not stopped: its stream %s ends at %d with %s, not %s; stop it first or choose another id",
				id, stream, e.Seq, e.Event.Type(), TypeStopped)
		}
		return eventlog.ExactVersion(e.Seq), e.Seq + 1, nil
	}
	return eventlog.NoStream, 1, nil
}

// bornOf returns the incarnation of agent id this runtime holds, active or
// passive; 0 when it holds none.
func (rt *Runtime) bornOf(id string) uint64 {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	if s := rt.agents[id]; s != nil {
		return s.born
	}
	return rt.passive[id].born
}

package agentapi

import (
	"context"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// The log API's guards: what a request through jido.api.log.* may not
// do to the streams the runtime recovers from.

// ownStream says whether stream is the node's own bookkeeping, which no
// API request may truncate or import into: the agent index among them,
// whose loss loses every agent at the next start.
func ownStream(stream string) bool { return strings.HasPrefix(stream, "runtime/") }

// GuardImport refuses imports into the node's own streams
// (logapi.Local.ImportGuard).
func GuardImport(_ context.Context, req logapi.ImportRequest) error {
	if !ownStream(req.Stream) {
		return nil
	}
	// The control plane answers, counts and dead-letters the refusal.
	return bus.Errorf(bus.ReasonForbidden, "%s is the node's own bookkeeping: nothing may be imported into it (forged entries there would change which agents come back at the next start)", req.Stream)
}

// truncatePrepareTimeout bounds how long a truncation waits for the agent
// whose stream it cuts to be idle enough for a snapshot.
const truncatePrepareTimeout = 5 * time.Second

// GuardTruncate lets a truncation through the log API go ahead only when
// the agent recovering from the stream keeps what it needs, snapshotting
// it first when it runs here (logapi.Local.Guard).
func GuardTruncate(rt *runtime.Runtime) func(context.Context, logapi.TruncateRequest) error {
	return func(ctx context.Context, req logapi.TruncateRequest) error { return guardTruncate(ctx, rt, req) }
}

func guardTruncate(ctx context.Context, rt *runtime.Runtime, req logapi.TruncateRequest) error {
	if ownStream(req.Stream) {
		// The control plane answers, counts and dead-letters the refusal.
		return bus.Errorf(bus.ReasonForbidden, "%s is the node's own bookkeeping and cannot be truncated: recovery reads it, and every agent would be lost at the next start, or come back wrong; stop agents you no longer need (jido-bus agent stop) instead", req.Stream)
	}
	ctx, cancel := context.WithTimeout(ctx, truncatePrepareTimeout)
	defer cancel()
	return rt.PrepareTruncate(ctx, req.Stream, req.Before, req.DryRun)
}

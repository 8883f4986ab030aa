// Package emitapi serves what agents emitted, read from the event log
// (runtime.ReadEmits), as the control-plane verb <prefix>.api.log.emits,
// and is the client `jido-bus log emits` uses against a running node:
//
//	emits  {"after":"12.1","stream":"agent/c1","types":"counter.*","limit":100}
//	       → {"emits":[{"stream","seq","global_seq","index","position","subject","status","event"}…],
//	          "damaged":[…],"next":"12.3","more":false}
//
// Every member of the request is optional. "after" is a position (a
// string "SEQ" or "SEQ.INDEX", or a number): stream sequences with a
// stream, global sequences without; it defaults to the start. The reply
// lists the emits after it in log order; "next" is the "after" of the
// following read, and "more" says whether the page stopped at its limit
// or at the connection's max payload rather than at the end.
//
// An emit is reported when it was published, or may have been (status
// "unconfirmed": its outcome is not recorded yet), on its agent's own
// subjects <prefix>.emit.<agent-id>.<type> — the same events a
// subscriber to <prefix>.emit.> receives live, with the same position
// headers; see runtime.ReadEmits.
package emitapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Area and Verb name the subject <prefix>.api.log.emits: the verb reads
// the log, as the area's others do.
const (
	Area = "log"
	Verb = "emits"
)

// DefaultMaxBytes bounds a page read without a NATS connection to size it
// (a data directory opened in process).
const DefaultMaxBytes = 512 << 10

// Local reads emits from a log in this process. It is safe for
// concurrent use, as the log is.
type Local struct {
	Log runtime.EmitLog
	// Subjects are the node's, which the emits were published under.
	Subjects bus.Subjects
	// MaxBytes bounds a page; zero means DefaultMaxBytes.
	MaxBytes int
}

// Emits reads one page. Its errors carry the machine word a reply does.
func (l Local) Emits(ctx context.Context, req runtime.EmitsRequest) (runtime.EmitsPage, error) {
	max := l.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	page, err := runtime.ReadEmits(ctx, l.Log, l.Subjects, req, max)
	if gone, ok := errors.AsType[*eventlog.GoneError](err); ok {
		return page, bus.Errorf(eventlog.ReasonGone, "the emits of %s after %s are no longer in the log: it keeps entries from seq %d on (the ones before were truncated); read after %d to go on, knowing those between are lost",
			gone.Stream, req.After, gone.First, gone.First-1)
	}
	if errors.Is(err, eventlog.ErrNotFound) {
		return page, bus.Errorf(bus.ReasonNotFound, "stream %s does not exist ('jido-bus log streams' lists the streams there are; an agent's is agent/<id>)", req.Stream)
	}
	return page, err
}

// Serve answers <prefix>.api.log.emits on b from local, one request at a
// time in arrival order, as the log's other reads are. A page is bounded
// by the connection's max payload unless local.MaxBytes is set.
func Serve(b *natsbus.Bus, local Local) error {
	if local.MaxBytes == 0 {
		local.MaxBytes = int(b.Conn().MaxPayload())
	}
	if err := b.HandleAPI(b.Subjects().API(Area, Verb), natsbus.Typed(local.Emits)); err != nil {
		return fmt.Errorf("log API: %w", err)
	}
	return nil
}

// Client reads emits through a running node, with natsbus.Requester (so
// its errors are the Requester's). It is safe for concurrent use.
type Client struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	// Timeout bounds each request unless ctx ends sooner; zero means 10s.
	Timeout time.Duration
	// Denials, installed as NC's error handler, makes a request the user
	// may not send fail at once as forbidden.
	Denials *natsbus.Denials
}

// Emits reads one page.
func (c Client) Emits(ctx context.Context, req runtime.EmitsRequest) (runtime.EmitsPage, error) {
	var page runtime.EmitsPage
	r := natsbus.Requester{NC: c.NC, Subjects: c.Subjects, Timeout: c.Timeout, Denials: c.Denials}
	return page, r.Call(ctx, Area, Verb, req, &page)
}

package logapi

import (
	"context"
	"fmt"

	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// API is the log's operations, one per verb: Local runs them on a node's
// own log, Replicated on the replicated log of a cluster, Client asks a
// running node for them.
type API interface {
	Streams(context.Context, StreamsRequest) (StreamsReply, error)
	Read(context.Context, ReadRequest) (ReadReply, error)
	Import(context.Context, ImportRequest) (ImportReply, error)
	Verify(context.Context, VerifyRequest) (eventlog.VerifyReport, error)
	Truncate(context.Context, TruncateRequest) (TruncateReply, error)
}

var (
	_ API = Local{}
	_ API = Replicated{}
	_ API = Client{}
)

// Serve answers <prefix>.api.log.<verb> requests from local on b, through
// the same handler path as every control-plane area (natsbus.HandleAPI):
// the Bus's queue group, its reply shape, dead letters of requests that
// cannot be read (unknown fields included), its request counter and its
// shutdown gate. The short verbs are handled one at a time per verb, in
// arrival order. A verify reads the whole log, which may take minutes, so
// it runs on a goroutine of its own (appends and reads go on meanwhile),
// at most one at a time: a verify asked for while one runs is refused
// with queue_overflow rather than queued. Shutting the Bus down cancels a
// running verify and waits for it.
func Serve(b *natsbus.Bus, local API) error {
	s := b.Subjects()
	serial := map[string]natsbus.APIFunc{
		VerbStreams:  handler(local.Streams),
		VerbShow:     handler(local.Read),
		VerbTail:     handler(local.Read),
		VerbExport:   handler(local.Read),
		VerbImport:   handler(local.Import),
		VerbTruncate: handler(local.Truncate),
	}
	for _, verb := range []string{VerbStreams, VerbShow, VerbTail, VerbExport, VerbImport, VerbTruncate} {
		if err := b.HandleAPI(s.API("log", verb), serial[verb]); err != nil {
			return fmt.Errorf("log API: %w", err)
		}
	}
	if err := b.HandleAPIConcurrent(s.API("log", VerbVerify), 1, handler(local.Verify)); err != nil {
		return fmt.Errorf("log API: %w", err)
	}
	return nil
}

// handler is natsbus.Typed with op's errors typed for the reply.
func handler[Req, Rep any](op func(context.Context, Req) (Rep, error)) natsbus.APIFunc {
	return natsbus.Typed(func(ctx context.Context, req Req) (Rep, error) {
		rep, err := op(ctx, req)
		if err != nil {
			return rep, asBusError(err)
		}
		return rep, nil
	})
}

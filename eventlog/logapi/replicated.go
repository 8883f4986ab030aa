package logapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
)

// ReasonClusterUnsupported is the machine word of a log request a
// cluster node does not serve from the replicated log (a read of the
// global log, a node's own dead letters); the message says what to do
// instead.
const ReasonClusterUnsupported = "cluster_unsupported"

// Replicated runs the log operations on a cluster's replicated log
// (eventlog/jslog), which every node of the cluster reads alike, so any
// node may answer. What a partitioned log cannot do is refused with
// ReasonClusterUnsupported, never answered from the node's own log:
//   - reading the global log (no stream named): the partitions have no
//     order between them;
//   - the stream dlq: each node keeps its dead letters in its own data
//     dir, which no other node reads.
//
// Listing, reading one stream, importing into one stream, verifying and
// truncating work as on a node's own log; a truncation removes whole
// appends and always keeps a stream's last one (jslog.Log.TruncateBefore).
type Replicated struct {
	Log *jslog.Log
	// VerifyProgress, if not nil, is called during Verify with the number
	// of entries checked so far.
	VerifyProgress func(checked uint64)
	// Guard, if not nil, is asked before every truncation (dry runs too).
	Guard TruncateGuard
	// ImportGuard, if not nil, is asked before every import; its error
	// is the reply.
	ImportGuard func(ctx context.Context, req ImportRequest) error
}

// replicatedStreamsPage bounds the streams of one reply: each costs a
// read of its last message, and 400 names of the longest (1 KiB) with
// their numbers stay under MaxReplyBytes.
const replicatedStreamsPage = 400

// Streams lists one page of the streams.
func (c Replicated) Streams(ctx context.Context, req StreamsRequest) (StreamsReply, error) {
	page, err := c.Log.Streams(ctx, req.Prefix, req.After, replicatedStreamsPage)
	if err != nil {
		return StreamsReply{}, err
	}
	return StreamsReply{Streams: page.Streams, Next: page.Next}, nil
}

// Read reads one page of one stream.
func (c Replicated) Read(ctx context.Context, req ReadRequest) (ReadReply, error) {
	if req.Stream == "" {
		return ReadReply{}, bus.Errorf(ReasonClusterUnsupported, "the replicated log has no global order (each partition has its own): name a stream ('jido-bus log streams' lists them), or read a partition stream %s_LOG_<n> with a JetStream client", strings.ToUpper(c.Log.Prefix()))
	}
	if err := c.refuseDeadLetters(req.Stream); err != nil {
		return ReadReply{}, err
	}
	opts := eventlog.ReadOptions{From: req.From, Backward: req.Backward, Types: req.Types}
	return readPage(ctx, req, c.Log.ReadStream(req.Stream, opts))
}

// Import appends the events in one atomic append (one message of the
// stream's partition).
func (c Replicated) Import(ctx context.Context, req ImportRequest) (ImportReply, error) {
	if err := c.refuseDeadLetters(req.Stream); err != nil {
		return ImportReply{}, err
	}
	if c.ImportGuard != nil {
		if err := c.ImportGuard(ctx, req); err != nil {
			return ImportReply{}, err
		}
	}
	return importEvents(ctx, req, c.Log.Append)
}

// Verify checks every message of the replicated log (jslog.Log.Verify).
func (c Replicated) Verify(ctx context.Context, _ VerifyRequest) (eventlog.VerifyReport, error) {
	return c.Log.Verify(ctx, c.VerifyProgress)
}

// Truncate removes a stream's entries below req.Before, once Guard
// agrees; with req.DryRun it only says what would go.
func (c Replicated) Truncate(ctx context.Context, req TruncateRequest) (TruncateReply, error) {
	if req.Before == 0 {
		return TruncateReply{}, bus.Errorf(bus.ReasonInvalidRequest, "truncate %s: before must be a sequence of 1 or more", req.Stream)
	}
	if err := eventlog.ValidateStream(req.Stream); err != nil {
		return TruncateReply{}, fmt.Errorf("truncate: %w", err)
	}
	if err := c.refuseDeadLetters(req.Stream); err != nil {
		return TruncateReply{}, err
	}
	if _, err := c.Log.Stream(req.Stream); err != nil {
		return TruncateReply{}, err
	}
	cut := req.Before
	if c.Guard != nil {
		if err := c.Guard(ctx, req); err != nil {
			return TruncateReply{}, err
		}
		// What the guard made safe is the stream as it left it (an agent
		// snapshotted at its head): the cut is fixed there, so an entry
		// appended since is kept.
		info, err := c.Log.Stream(req.Stream)
		if err != nil {
			return TruncateReply{}, err
		}
		cut = min(cut, info.Head+1)
	}
	r, err := c.Log.TruncateBefore(ctx, req.Stream, cut, req.DryRun)
	if err != nil {
		return TruncateReply{}, err
	}
	return TruncateReply{Removed: r.Removed, From: r.From, To: r.To, Bytes: r.Bytes, DryRun: req.DryRun}, nil
}

// refuseDeadLetters refuses the stream dlq, which is each node's own.
func (c Replicated) refuseDeadLetters(stream string) error {
	if stream != "dlq" {
		return nil
	}
	return bus.Errorf(ReasonClusterUnsupported, "a cluster node keeps its dead letters in its own data dir, not in the replicated log: subscribe to them as they happen (nats sub '%s.dlq.>'), or read a node's with 'jido-bus log show dlq --data-dir DIR' once it is stopped", c.Log.Prefix())
}

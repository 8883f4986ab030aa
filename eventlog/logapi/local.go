package logapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Local runs the log operations on an open Log in this process. It is safe
// for concurrent use, as the Log is.
type Local struct {
	Log *eventlog.Log
	// VerifyProgress, if not nil, is called during Verify with the number
	// of entries checked so far.
	VerifyProgress func(checked uint64)
	// Guard, if not nil, is asked before every truncation (dry runs too).
	Guard TruncateGuard
	// ImportGuard, if not nil, is asked before every import; its error
	// is the reply.
	ImportGuard func(ctx context.Context, req ImportRequest) error
}

// streamsReserve is the part of MaxReplyBytes kept for a streams reply's
// envelope and its Next (a stream name, at most 1 KiB).
const streamsReserve = 4 << 10

// Streams lists one page of the streams.
func (c Local) Streams(_ context.Context, req StreamsRequest) (StreamsReply, error) {
	all := c.Log.Streams(req.Prefix)
	if req.After != "" {
		all = all[sort.Search(len(all), func(i int) bool { return all[i].Stream > req.After }):]
	}
	reply := StreamsReply{Streams: all}
	size := 0
	for i, s := range all {
		body, err := json.Marshal(s)
		if err != nil {
			return StreamsReply{}, fmt.Errorf("encode stream %s: %w", s.Stream, err)
		}
		if size += len(body) + 1; size > MaxReplyBytes-streamsReserve && i > 0 {
			reply.Streams, reply.Next = all[:i], all[i-1].Stream
			break
		}
	}
	return reply, nil
}

// Read reads one page. Damaged entries are listed in the reply and
// skipped, so one bad entry does not stop a page.
func (c Local) Read(ctx context.Context, req ReadRequest) (ReadReply, error) {
	opts := eventlog.ReadOptions{From: req.From, Backward: req.Backward, Types: req.Types}
	it := c.Log.ReadAll(opts)
	if req.Stream != "" {
		it = c.Log.ReadStream(req.Stream, opts)
	}
	return readPage(ctx, req, it)
}

// Import appends the events in one atomic append.
func (c Local) Import(ctx context.Context, req ImportRequest) (ImportReply, error) {
	if c.ImportGuard != nil {
		if err := c.ImportGuard(ctx, req); err != nil {
			return ImportReply{}, err
		}
	}
	return importEvents(ctx, req, c.Log.Append)
}

// Verify checks the whole log.
func (c Local) Verify(ctx context.Context, _ VerifyRequest) (eventlog.VerifyReport, error) {
	r, err := c.Log.Verify(ctx, c.VerifyProgress)
	if err == nil && r.Damaged == nil {
		// Nothing damaged is an empty list, not null, in the reply.
		r.Damaged = []*eventlog.CorruptError{}
	}
	return r, err
}

// Truncate removes a stream's entries below req.Before, once Guard
// agrees; with req.DryRun it only says what would go.
func (c Local) Truncate(ctx context.Context, req TruncateRequest) (TruncateReply, error) {
	if req.Before == 0 {
		return TruncateReply{}, bus.Errorf(bus.ReasonInvalidRequest, "truncate %s: before must be a sequence of 1 or more", req.Stream)
	}
	if err := eventlog.ValidateStream(req.Stream); err != nil {
		return TruncateReply{}, fmt.Errorf("truncate: %w", err)
	}
	info, err := c.Log.Stream(req.Stream)
	if err != nil {
		return TruncateReply{}, err
	}
	if c.Guard != nil {
		if err := c.Guard(ctx, req); err != nil {
			return TruncateReply{}, err
		}
		// What the guard made safe is the stream as it left it (an agent
		// snapshotted at its head): the cut is fixed there, so an entry
		// appended since (an outcome recorded late, a new signal) is kept,
		// and the reply names exactly what went.
		if info, err = c.Log.Stream(req.Stream); err != nil {
			return TruncateReply{}, err
		}
	}
	reply := TruncateReply{DryRun: req.DryRun}
	cut := min(req.Before, info.Head+1)
	if cut > info.First {
		reply.From, reply.To = info.First, cut-1
	}
	if req.DryRun {
		if reply.From == 0 {
			return reply, nil
		}
		for e, err := range c.Log.ReadStream(req.Stream, eventlog.ReadOptions{From: reply.From}) {
			if err != nil {
				return TruncateReply{}, err
			}
			if e.Seq > reply.To {
				break
			}
			reply.Removed++
			reply.Bytes += uint64(e.Size)
		}
		return reply, nil
	}
	if reply.Removed, err = c.Log.TruncateBefore(ctx, req.Stream, cut); err != nil {
		return TruncateReply{}, err
	}
	if after, err := c.Log.Stream(req.Stream); err == nil {
		reply.Bytes = info.Bytes - min(info.Bytes, after.Bytes)
	}
	return reply, nil
}

// asBusError gives log errors the machine word a reply carries.
func asBusError(err error) error {
	if _, ok := errors.AsType[*bus.Error](err); ok {
		return err
	}
	for _, m := range []struct {
		sentinel error
		reason   string
	}{
		{eventlog.ErrNotFound, bus.ReasonNotFound},
		{eventlog.ErrWrongVersion, eventlog.ReasonWrongVersion},
		{eventlog.ErrGone, eventlog.ReasonGone},
		{eventlog.ErrCorrupt, eventlog.ReasonCorrupt},
	} {
		if errors.Is(err, m.sentinel) {
			return bus.Errorf(m.reason, "%v", err)
		}
	}
	return err
}

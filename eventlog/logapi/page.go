package logapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// readPage reads one page of req from it, which reads req.Stream (or the
// global log when req.Stream is empty) with req's From, Backward and
// Types: at most req.Limit entries (DefaultPageSize when 0) and about
// MaxReplyBytes of them. Damaged entries are listed in the reply and
// skipped, so one bad entry does not stop a page.
func readPage(ctx context.Context, req ReadRequest, it iter.Seq2[eventlog.Entry, error]) (ReadReply, error) {
	limit := req.Limit
	switch {
	case limit < 0:
		return ReadReply{}, bus.Errorf(bus.ReasonInvalidRequest, "limit %d: want 0 (a page of %d) or more; a page also stops at %d bytes", limit, DefaultPageSize, MaxReplyBytes)
	case limit == 0:
		limit = DefaultPageSize
	}
	reply := ReadReply{Entries: []Entry{}, Next: req.From}
	size := 0
	for e, err := range it {
		if ce, ok := errors.AsType[*eventlog.CorruptError](err); ok {
			reply.Damaged = append(reply.Damaged, ce)
			if req.Stream == "" {
				reply.Next = next(req, ce.GlobalSeq)
			} else if ce.Seq != 0 {
				reply.Next = next(req, ce.Seq)
			}
			continue
		}
		if err != nil {
			return ReadReply{}, err
		}
		if err := ctx.Err(); err != nil {
			return ReadReply{}, err
		}
		if len(reply.Entries) == limit || (size+e.Size > MaxReplyBytes && len(reply.Entries) > 0) {
			reply.More = true
			break
		}
		body, err := json.Marshal(e.Event)
		if err != nil {
			return ReadReply{}, fmt.Errorf("encode %s seq %d: %w", e.Stream, e.Seq, err)
		}
		size += len(body)
		reply.Entries = append(reply.Entries, Entry{Stream: e.Stream, Seq: e.Seq, GlobalSeq: e.GlobalSeq, Time: e.Time, Event: body})
		pos := e.Seq
		if req.Stream == "" {
			pos = e.GlobalSeq
		}
		reply.Next = next(req, pos)
	}
	return reply, nil
}

// next is the position after pos in the direction of req.
func next(req ReadRequest, pos uint64) uint64 {
	if req.Backward {
		return pos - 1
	}
	return pos + 1
}

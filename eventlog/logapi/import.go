package logapi

import (
	"context"
	"encoding/json"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// appendFunc is a log's Append.
type appendFunc func(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error)

// importEvents decodes req's events and appends them with any expected
// version, in one append, counting what was new and what the stream
// already held.
func importEvents(ctx context.Context, req ImportRequest, appendTo appendFunc) (ImportReply, error) {
	events := make([]bus.Signal, len(req.Events))
	for i, raw := range req.Events {
		ev := event.New()
		if err := json.Unmarshal(raw, &ev); err != nil {
			return ImportReply{}, bus.Errorf(bus.ReasonMalformed, "import to %s: event %d is not a CloudEvent: %v", req.Stream, i, err)
		}
		events[i] = ev
	}
	res, err := appendTo(ctx, req.Stream, eventlog.AnyVersion, events...)
	if err != nil {
		return ImportReply{}, err
	}
	reply := ImportReply{Version: res.Version}
	for _, p := range res.Positions {
		if p.Duplicate {
			reply.Duplicates++
		} else {
			reply.Appended++
		}
	}
	return reply, nil
}

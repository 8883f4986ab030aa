package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// logStreams returns the partition streams of cluster mode's replicated
// log (none in single-node mode, whose log is the node's own Pebble),
// asking JetStream's API through the NATS CLI.
func (s *smoke) logStreams(ctx context.Context) ([]string, error) {
	out, err := s.cli(ctx, "req", "--raw", "$JS.API.STREAM.NAMES", `{"subject":"jido.log.>"}`)
	if err != nil {
		return nil, err
	}
	var r struct {
		Streams []string `json:"streams"`
		Error   *jsError `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("stream names: %w: %s", err, out)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("stream names: %s", r.Error.Description)
	}
	return r.Streams, nil
}

type jsError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

// jsAgentIncrements reads agent's decisions straight from the replicated
// log — every partition stream, message by message with the stream's
// own get API (next by subject) — and returns the ids of the increments
// it finds, in log order. This is the truth in cluster mode, not what a
// node says of it.
func (s *smoke) jsAgentIncrements(ctx context.Context, streams []string, agent string) ([]string, error) {
	var ids []string
	subject := "jido.log.*.agent." + agent
	for _, stream := range streams {
		for seq := uint64(1); ; {
			out, err := s.cli(ctx, "req", "--raw", "$JS.API.STREAM.MSG.GET."+stream, fmt.Sprintf(`{"seq":%d,"next_by_subj":%q}`, seq, subject))
			if err != nil {
				return nil, err
			}
			var r struct {
				Message *struct {
					Seq  uint64 `json:"seq"`
					Data []byte `json:"data"` // base64 in the JSON
				} `json:"message"`
				Error *jsError `json:"error"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				return nil, fmt.Errorf("%s seq %d: %w: %s", stream, seq, err, out)
			}
			if r.Error != nil && r.Error.ErrCode == 10037 { // no message found: the end
				break
			}
			if r.Error != nil || r.Message == nil {
				return nil, fmt.Errorf("%s seq %d: %s", stream, seq, strings.TrimSpace(string(out)))
			}
			incs, err := decisionIncrements(r.Message.Data)
			if err != nil {
				return nil, fmt.Errorf("%s seq %d: %w", stream, r.Message.Seq, err)
			}
			ids = append(ids, incs...)
			seq = r.Message.Seq + 1
		}
	}
	return ids, nil
}

// decisionIncrements returns the ids of the counter.increment signals in
// one decision of the replicated log: a JSON array of CloudEvents, the
// signal first, then what the runtime recorded with it.
func decisionIncrements(data []byte) ([]string, error) {
	var events []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &events); err != nil {
		return nil, fmt.Errorf("a decision that is not a JSON array of events: %w", err)
	}
	var ids []string
	for _, e := range events {
		if e.Type == "counter.increment" {
			ids = append(ids, e.ID)
		}
	}
	return ids, nil
}

package agentapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// ListReply is one page of agents (each an Info, as state answers). Agents are encoded one by one so that
// the page's size is measured, not guessed.
type ListReply struct {
	Agents []json.RawMessage `json:"agents"`
	// Next, when set, is the cursor of the page after this one.
	Next string `json:"next,omitempty"`
}

// replyReserve is what a list reply holds besides its agents'
// descriptions: {"ok":true,"agents":[…],"next":"<cursor>"} with a cursor
// of the longest agent id, and room to spare.
const replyReserve = 128 + 2*bus.MaxAgentIDLen

func list(ctx context.Context, rt *runtime.Runtime, o Options, req []byte, maxPayload int64) (any, error) {
	var r ListRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	opts := runtime.ListOptions{Type: r.Type, SkipPassive: r.SkipPassive}
	switch r.Sort {
	case "", "id":
	case "queue":
		opts.ByQueue = true
	default:
		return nil, bus.Errorf(bus.ReasonInvalidRequest, `sort %q: want "id" or "queue"`, r.Sort)
	}
	switch {
	case r.Limit < 0:
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "limit %d: want 0 (a page of %d) up to %d", r.Limit, DefaultListLimit, MaxListLimit)
	case r.Limit == 0:
		r.Limit = DefaultListLimit
	}
	r.Limit = min(r.Limit, MaxListLimit)
	if r.After != "" {
		if opts.ByQueue {
			return nil, bus.Errorf(bus.ReasonInvalidRequest, `"after" pages in id order; the queue order is a moment's and answers one page: leave out "after" or "sort"`)
		}
		id, err := decodeCursor(r.After)
		if err != nil {
			return nil, err
		}
		opts.After = id
	}
	// One agent past the page tells whether another page follows.
	opts.Limit = r.Limit + 1
	var infos []runtime.Info
	if o.List != nil {
		var err error
		if infos, err = o.List(ctx, opts); err != nil {
			return nil, err
		}
	} else {
		infos = rt.ListSome(opts)
	}
	budget := int(maxPayload) - replyReserve
	reply := ListReply{Agents: make([]json.RawMessage, 0, min(len(infos), r.Limit))}
	size, more := 0, len(infos) > r.Limit
	for i, info := range infos[:min(len(infos), r.Limit)] {
		body, err := json.Marshal(info)
		if err != nil {
			return nil, fmt.Errorf("list: encode agent %s: %w", info.ID, err)
		}
		if size+len(body)+1 > budget {
			if i > 0 {
				more = true
				break
			}
			// An agent whose description alone passes the limit is
			// listed without its state (agent state reads that).
			info.State = nil
			if body, err = json.Marshal(info); err != nil {
				return nil, fmt.Errorf("list: encode agent %s: %w", info.ID, err)
			}
		}
		size += len(body) + 1
		reply.Agents = append(reply.Agents, body)
	}
	if more && !opts.ByQueue && len(reply.Agents) > 0 {
		var last struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(reply.Agents[len(reply.Agents)-1], &last)
		reply.Next = encodeCursor(last.ID)
	}
	return reply, nil
}

// A cursor is the last id of a page, base64url-encoded so that clients
// treat it as opaque and a hand-made one is caught.
func encodeCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

func decodeCursor(c string) (string, error) {
	id, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		err = bus.ValidateAgentID(string(id))
	}
	if err != nil {
		return "", bus.Errorf(bus.ReasonInvalidRequest, `cursor %q is not one a list reply gave as "next"; leave out "after" to list from the first agent`, c)
	}
	return string(id), nil
}

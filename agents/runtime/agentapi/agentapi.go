// Package agentapi serves the agent runtime's control plane over NATS,
// JSON request/reply on <prefix>.api.agent.<verb>:
//
//	start   {"type":"counter","id":"c1","initial_state":{…},"options":{…}}  → the agent's Info
//	stop    {"id":"c1","reason":"…"}                                         → {"id":"c1"}
//	call    {"id":"c1","type":"counter.increment","data":{"by":2}}           → {"state":{…},"version":N}
//	        or {"id":"c1","signal":{a CloudEvent}}
//	cast    the same as call                                                 → {"id":"<signal id>"}
//	state   {"id":"c1"}                                                      → Info: state, status, queue_length, version, parent, children
//	whereis {"id":"c1"}                                                      → {"id","type","stream","status"}
//	list    {"type":"counter","sort":"queue","limit":10,"skip_passive":true} → {"agents":[Info…],"next":"<cursor>"}
//	        every member optional: sort "id" (default) or "queue" (most
//	        queued first; passive agents last); limit is the page size,
//	        DefaultListLimit when 0, at most MaxListLimit; a page also ends
//	        before its reply would pass the connection's max payload. When
//	        more agents follow in id order, "next" is a cursor: send it back
//	        as "after" for the next page. The queue order is a moment's and
//	        is not paged: it answers its first page only.
//	await   {"id":"c1","timeout":"5s"}                                       → Info once state.status is completed or failed
//
// Every reply is {"ok":true,…} or {"ok":false,"error":{"type","message"}}.
//
// ServeSignals serves the runtime's signal ingress beside it
// (<prefix>.agent.<id>.<type> to one agent, <prefix>.signal.<type> to
// every agent whose routes match), under the same admission (Options).
package agentapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// Verbs of the API.
const (
	VerbStart   = "start"
	VerbStop    = "stop"
	VerbCall    = "call"
	VerbCast    = "cast"
	VerbState   = "state"
	VerbWhereis = "whereis"
	VerbList    = "list"
	VerbAwait   = "await"
)

// DefaultAwaitTimeout bounds an await request that names no timeout, and
// MaxAwaitTimeout any that does.
const (
	DefaultAwaitTimeout = 30 * time.Second
	MaxAwaitTimeout     = 10 * time.Minute
	maxAwaitsInFlight   = 1024
	callTimeout         = 30 * time.Second
)

// DefaultListLimit is the page size of a list request that names no
// limit, and MaxListLimit the largest page one may ask for (a larger limit
// is lowered to it). A page also stops before its reply would pass the
// connection's max payload.
const (
	DefaultListLimit = 1000
	MaxListLimit     = 10000
)

// Serve registers the API's handlers on b.
func Serve(b *natsbus.Bus, rt *runtime.Runtime, opts Options) error {
	s := b.Subjects()
	handlers := map[string]natsbus.APIFunc{
		VerbStart:   func(ctx context.Context, req []byte) (any, error) { return start(ctx, rt, opts, req) },
		VerbStop:    func(ctx context.Context, req []byte) (any, error) { return stop(ctx, rt, opts, req) },
		VerbState:   func(_ context.Context, req []byte) (any, error) { return state(rt, req) },
		VerbWhereis: func(_ context.Context, req []byte) (any, error) { return whereis(rt, req) },
		VerbList: func(ctx context.Context, req []byte) (any, error) {
			return list(ctx, rt, opts, req, b.Conn().MaxPayload())
		},
	}
	for verb, fn := range handlers {
		if err := b.HandleAPI(s.API("agent", verb), fn); err != nil {
			return err
		}
	}
	concurrent := map[string]natsbus.APIFunc{
		VerbCall:  func(ctx context.Context, req []byte) (any, error) { return call(ctx, rt, opts, req) },
		VerbCast:  func(ctx context.Context, req []byte) (any, error) { return cast(rt, opts, req) },
		VerbAwait: func(ctx context.Context, req []byte) (any, error) { return await(ctx, rt, req) },
	}
	for verb, fn := range concurrent {
		if err := b.HandleAPIConcurrent(s.API("agent", verb), maxAwaitsInFlight, fn); err != nil {
			return err
		}
	}
	return nil
}

// Options adjust the agent API and the signal ingress.
type Options struct {
	// Admit, when set, is asked before a call or a cast of a signal of
	// type typ, or a stop (typ empty), reaches agent id, through the API
	// or the ingress; its error (forbidden, typically) is the reply. The
	// node keeps agents whose stream another component writes alone (a
	// project's), and the events a conversation's node writes, out of
	// reach of callers this way. Signal types of the runtime's own
	// (RuntimeTypePrefix) are refused before it is asked.
	Admit func(id, typ string) error
	// AdmitBroadcast, when set, is asked before a broadcast of a signal
	// of type typ: a type every agent of a kind routes (a project's
	// signals, a conversation's events) would reach them all.
	AdmitBroadcast func(typ string) error
	// AdmitStart, when set, is asked before a start; its error
	// (forbidden, typically) is the reply. The node keeps agent types
	// another component starts alone (a project's) out of it this way.
	AdmitStart func(runtime.StartRequest) error
	// Transient, when set, says which admitted signal types the ingress
	// publishes on the agent's emit subject for live views instead of
	// committing them (a conversation's assistant deltas).
	Transient func(typ string) bool
	// Refused, when set, counts each refusal of the ingress the bus does
	// not count itself (admission, a transient signal's unknown agent).
	Refused func(reason string)
	// List, when set, answers the list verb instead of the runtime's own
	// ListSome: a cluster's node asks every node and merges their lists.
	List func(ctx context.Context, opts runtime.ListOptions) ([]runtime.Info, error)
}

func (o Options) admit(id, typ string) error {
	if typ != "" {
		if err := runtimeType(typ); err != nil {
			return err
		}
	}
	if o.Admit == nil {
		return nil
	}
	return o.Admit(id, typ)
}

func (o Options) admitBroadcast(typ string) error {
	if err := runtimeType(typ); err != nil {
		return err
	}
	if o.AdmitBroadcast == nil {
		return nil
	}
	return o.AdmitBroadcast(typ)
}

// IDRequest names agent ID: the body of stop (with an optional Reason,
// recorded with the stop), state and whereis.
type IDRequest struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// IDReply names the agent (stop) or the signal (cast) a request acted on.
type IDReply struct {
	ID string `json:"id"`
}

// WhereisReply says where agent ID lives: its type, its stream in the log
// and its status (active, passive, stopped…).
type WhereisReply struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Stream string `json:"stream"`
	Status string `json:"status"`
}

func decodeID(req []byte) (IDRequest, error) {
	var r IDRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return r, err
	}
	if r.ID == "" {
		return r, bus.Errorf(bus.ReasonInvalidRequest, `request names no agent: send {"id":"<agent-id>"}`)
	}
	// An id no agent can have is bad input (refused, dead-lettered), not
	// an absent agent (not_found).
	return r, bus.ValidateAgentID(r.ID)
}

func start(ctx context.Context, rt *runtime.Runtime, opts Options, req []byte) (any, error) {
	var r runtime.StartRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	var raw struct {
		Options json.RawMessage `json:"options"`
	}
	if json.Unmarshal(req, &raw) == nil {
		if err := runtime.ValidateOptionsJSON(raw.Options); err != nil {
			return nil, err
		}
	}
	if r.Type == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, `request names no agent type: send {"type":"counter","id":"c1"}`)
	}
	if opts.AdmitStart != nil {
		if err := opts.AdmitStart(r); err != nil {
			return nil, err
		}
	}
	return rt.Start(ctx, r)
}

func stop(ctx context.Context, rt *runtime.Runtime, opts Options, req []byte) (any, error) {
	r, err := decodeID(req)
	if err != nil {
		return nil, err
	}
	if err := opts.admit(r.ID, ""); err != nil {
		return nil, err
	}
	if err := rt.Stop(ctx, r.ID, r.Reason); err != nil {
		return nil, err
	}
	return IDReply{ID: r.ID}, nil
}

func state(rt *runtime.Runtime, req []byte) (any, error) {
	r, err := decodeID(req)
	if err != nil {
		return nil, err
	}
	return rt.State(r.ID)
}

func whereis(rt *runtime.Runtime, req []byte) (any, error) {
	r, err := decodeID(req)
	if err != nil {
		return nil, err
	}
	info, err := rt.State(r.ID)
	if err != nil {
		return nil, err
	}
	return WhereisReply{ID: info.ID, Type: info.Type, Stream: info.Stream, Status: info.Status}, nil
}

// ListRequest is the body of list; every member is optional.
type ListRequest struct {
	Type string `json:"type,omitempty"`
	// Sort is "id" (the default) or "queue": the agents with the most
	// signals and directives waiting first, passive agents last.
	Sort string `json:"sort,omitempty"`
	// Limit returns only the first Limit agents of that order; 0 means
	// all. Only the returned agents are described, so a small limit is
	// cheap however many agents the node holds.
	Limit int `json:"limit,omitempty"`
	// SkipPassive leaves the passive agents out: with a limit, the
	// answer then costs what the active agents cost, however many
	// passive ones the node holds.
	SkipPassive bool `json:"skip_passive,omitempty"`
	// After is the cursor a previous page's reply gave as Next.
	After string `json:"after,omitempty"`
}

// SignalRequest is the body of call and cast: agent ID and either a whole
// Signal (a CloudEvent in structured JSON) or a Type with its Data, of
// which the node makes a signal.
type SignalRequest struct {
	ID     string          `json:"id"`
	Signal *bus.Signal     `json:"signal,omitempty"`
	Type   string          `json:"type,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

func (r SignalRequest) build() (bus.Signal, error) {
	if r.ID == "" {
		return bus.Signal{}, bus.Errorf(bus.ReasonInvalidRequest, `request names no agent: send {"id":"c1","type":"counter.increment","data":{…}}`)
	}
	if err := bus.ValidateAgentID(r.ID); err != nil {
		return bus.Signal{}, err
	}
	if r.Signal != nil {
		if r.Type != "" || r.Data != nil {
			return bus.Signal{}, bus.Errorf(bus.ReasonInvalidRequest, "send either a signal or a type with data, not both")
		}
		if err := bus.ValidateInput(r.Signal, bus.Limits{}); err != nil {
			return bus.Signal{}, err
		}
		return *r.Signal, nil
	}
	if r.Type == "" {
		return bus.Signal{}, bus.Errorf(bus.ReasonInvalidRequest, `request has neither a signal nor a type: send {"id":"c1","type":"counter.increment","data":{…}}`)
	}
	var data any
	if r.Data != nil {
		data = r.Data
	}
	return bus.NewSignal(r.Type, "jido-bus:api", data)
}

func call(ctx context.Context, rt *runtime.Runtime, opts Options, req []byte) (any, error) {
	var r SignalRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	sig, err := r.build()
	if err != nil {
		return nil, err
	}
	if err := opts.admit(r.ID, sig.Type()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return rt.Call(ctx, r.ID, sig)
}

func cast(rt *runtime.Runtime, opts Options, req []byte) (any, error) {
	var r SignalRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	sig, err := r.build()
	if err != nil {
		return nil, err
	}
	if err := opts.admit(r.ID, sig.Type()); err != nil {
		return nil, err
	}
	if err := rt.Cast(r.ID, sig); err != nil {
		return nil, err
	}
	return IDReply{ID: sig.ID()}, nil
}

// AwaitRequest waits until agent ID's state.status is completed or
// failed, at most Timeout (a Go duration; DefaultAwaitTimeout when empty,
// at most MaxAwaitTimeout).
type AwaitRequest struct {
	ID      string `json:"id"`
	Timeout string `json:"timeout,omitempty"`
}

func await(ctx context.Context, rt *runtime.Runtime, req []byte) (any, error) {
	var r AwaitRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	if r.ID == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, `request names no agent: send {"id":"c1","timeout":"5s"}`)
	}
	if err := bus.ValidateAgentID(r.ID); err != nil {
		return nil, err
	}
	timeout := DefaultAwaitTimeout
	if r.Timeout != "" {
		d, err := time.ParseDuration(r.Timeout)
		if err != nil || d <= 0 {
			return nil, bus.Errorf(bus.ReasonInvalidRequest, "timeout %q: want a positive Go duration such as 5s", r.Timeout)
		}
		timeout = min(d, MaxAwaitTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return rt.Await(ctx, r.ID)
}

package agents

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/jido-bus/jido-bus/bus"
)

// Origin is what an instruction knows of the signal that caused it. It is
// the agent's only source of identity and time: ids of signals an
// instruction emits derive from Origin.ID, and Env.Now is Origin.Time, so
// running the same instruction again gives the same result.
type Origin struct {
	ID            string    `json:"id,omitempty"`
	Source        string    `json:"source,omitempty"`
	Type          string    `json:"type,omitempty"`
	Time          time.Time `json:"time,omitzero"`
	CorrelationID string    `json:"correlationid,omitempty"`
	// TraceParent is the signal's W3C trace context; what the instruction
	// emits carries it, as part of the same trace.
	TraceParent string `json:"traceparent,omitempty"`
}

// OriginOf returns the origin of instructions caused by sig.
func OriginOf(sig bus.Signal) Origin {
	if ec, ok := sig.Context.(*event.EventContextV1); ok && ec != nil {
		// What the sdk's getters return, read from the context: they copy
		// it, build the source's string again and copy the extensions map
		// (allocations on every signal decided).
		o := Origin{ID: ec.ID, Source: sourceString(ec.Source), Type: ec.Type}
		if ec.Time != nil {
			o.Time = ec.Time.Time
		}
		if v, ok := ec.Extensions[bus.ExtCorrelationID].(string); ok {
			o.CorrelationID = v
		}
		if v, ok := ec.Extensions[bus.ExtTraceParent].(string); ok {
			o.TraceParent = v
		}
		return o
	}
	o := Origin{ID: sig.ID(), Source: sig.Source(), Type: sig.Type(), Time: sig.Time()}
	ext := sig.Extensions()
	if v, ok := ext[bus.ExtCorrelationID].(string); ok {
		o.CorrelationID = v
	}
	if v, ok := ext[bus.ExtTraceParent].(string); ok {
		o.TraceParent = v
	}
	return o
}

// Instruction asks an agent to run one action with params. It is plain
// data and JSON-serialisable, since a RunInstruction directive carries one
// into the log.
type Instruction struct {
	// Action is the action's qualified name: the agent's own action by its
	// name ("increment"), a skill's as <prefix>.<name> ("calculator.add").
	Action string `json:"action"`
	// Params is the action's input as JSON; empty means none.
	Params json.RawMessage `json:"params,omitempty"`
	// Origin is the signal the instruction answers. Without one, emitted
	// ids derive from the agent id and are only unique within one Cmd.
	Origin Origin `json:"origin,omitzero"`
}

// NewInstruction returns an instruction for action with params encoded as
// JSON (params may be nil, or a json.RawMessage taken as is).
func NewInstruction(action string, params any) (Instruction, error) {
	in := Instruction{Action: action}
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		in.Params = p
	default:
		b, err := json.Marshal(params)
		if err != nil {
			return Instruction{}, fmt.Errorf("params of %s: %w", action, err)
		}
		in.Params = b
	}
	return in, nil
}

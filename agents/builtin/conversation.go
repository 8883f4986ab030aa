package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/schemas"
)

// ConversationType is the name of the conversation agent type.
const ConversationType = "conversation"

// Error types of the conversation agent's Error directives.
const (
	ReasonInvalidEvent   = "invalid_event"   // the event fails its JSON Schema; the message names the pointer
	ReasonUnknownEvent   = "unknown_event"   // a conversation.* type with no schema
	ReasonTransientEvent = "transient_event" // conversation.assistant.delta, which is never logged
)

// NewConversation returns the conversation agent type. One agent runs per
// conversation: its id is "<project-id>/<conversation-id>", and the runtime
// gives agents of this type the log stream
// conversation.Stream(id) = "conversation/<project-id>/<conversation-id>"
// instead of "agent/<id>".
//
// Every conversation event is a signal routed to the action
// "conversation.ingest", which validates the whole CloudEvent (attributes,
// causationid and data) against its schema in schemas/json/event. A bad
// event changes nothing and yields one Error directive of type
// invalid_event whose message starts with the failing JSON pointer
// ("/data/call_id: ..."). The error is a refusal (agents.Refuse), so the
// runtime answers the sender with it, files a dead letter and does not
// append the event as a conversation entry: its id stays free for the
// corrected event.
//
// conversation.assistant.delta is transient: it is published on NATS for
// live views (jido.emit.<agent-id>.conversation.assistant.delta) and never
// written to the log. The runtime must check conversation.IsTransient before
// it commits a signal to this agent and publish such signals without
// calling Step or appending; should one reach Step anyway, it is refused
// (transient_event), so it is never logged and never counts as state. An
// event type with no schema is refused too (unknown_event).
//
// The agent's state is deliberately small — under the state key
// "conversation": status (active, cancelled or stopped), the count of
// events, the last event id, the pending tool calls (call id → tool name)
// and the LLM call in flight — what the runtime needs to order and resume
// a conversation. What people and LLM calls read are the projections.
// The large tool outputs are to be offloaded (views.Artifacts.Offload)
// before the signal reaches Step.
func NewConversation() (*agents.Definition, error) { return NewConversationWith(nil) }

// ConversationLoop decides what a conversation does next, after an event
// has passed validation: it gets the action's environment (the state
// before the event, under the state key "conversation") and the whole
// CloudEvent as JSON, and returns the state operations and directives the
// event implies. It must be pure, as any action: the same state and event
// give the same result, which is what lets a replay re-decide a whole
// conversation. Its operations must leave alone the members the conversation
// agent keeps itself (status, events, last_event_id, pending_tools,
// llm_request); they are applied after those.
//
// The assistant (projects/assistant) is such a loop: it turns a user
// message into an LLM call, an answer's tool calls into tool runs, and
// their results into the next call.
type ConversationLoop func(env agents.Env, event json.RawMessage) (agents.Result, error)

// NewConversationWith returns the conversation agent type with loop
// deciding after each valid event (nil: none, the agent only validates
// and tracks).
func NewConversationWith(loop ConversationLoop) (*agents.Definition, error) {
	reg, err := schemas.Builtin()
	if err != nil {
		return nil, err
	}
	return agents.Define(agents.Spec{
		Name:        ConversationType,
		Description: "One conversation: validates each conversation event against its schema and tracks what is pending; the read models are projections.",
		Schema:      `{"type": "object"}`,
		Skills:      []agents.Attachment{agents.Use(conversationSkill(reg, loop), nil)},
	})
}

const conversationState = `{
  "type": "object",
  "properties": {
    "status": {"enum": ["active", "cancelled", "stopped"], "default": "active"},
    "events": {"type": "integer", "minimum": 0, "default": 0},
    "last_event_id": {"type": "string", "default": ""},
    "pending_tools": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
    "llm_request": {"type": "string", "default": "", "description": "id of the conversation.llm.requested in flight"}
  }
}`

func conversationSkill(reg *schemas.Registry, loop ConversationLoop) agents.Skill {
	return agents.Skill{
		Name:           "conversation",
		StateKey:       "conversation",
		Description:    "Conversation events: schema validation and pending work.",
		Schema:         conversationState,
		SignalPatterns: []string{conversation.TypePattern},
		// Routing hands an action only the signal's data; the schema
		// covers the whole event (causationid included), so the hook
		// makes the whole event the data the action receives.
		HandleSignal: func(sig bus.Signal, _ map[string]any) (bus.Signal, error) {
			whole, err := json.Marshal(sig)
			if err != nil {
				return sig, agents.Refuse(bus.Errorf(ReasonInvalidEvent, "%s %s: %v", sig.Type(), sig.ID(), err))
			}
			out := sig.Clone()
			if err := bus.SetJSONData(&out, json.RawMessage(whole)); err != nil {
				return sig, err
			}
			return out, nil
		},
		Actions: []agents.Action{{
			Name:        "ingest",
			Description: "Validate a conversation event and track pending tool and LLM calls.",
			Run: func(env agents.Env, params json.RawMessage) (agents.Result, error) {
				res, err := ingest(reg, env, params)
				if err != nil || loop == nil {
					return res, err
				}
				next, err := loop(env, params)
				if err != nil {
					return agents.Result{}, err
				}
				res.Ops = append(res.Ops, next.Ops...)
				res.Directives = append(res.Directives, next.Directives...)
				return res, nil
			},
		}},
		Routes: []agents.Route{{Pattern: conversation.TypePattern, Action: "ingest"}},
	}
}

// ingest validates one event (params: the whole CloudEvent) and returns
// the state operations it implies.
func ingest(reg *schemas.Registry, env agents.Env, params json.RawMessage) (agents.Result, error) {
	typ := env.Origin.Type
	if conversation.IsTransient(typ) {
		return agents.Result{}, agents.Refuse(bus.Errorf(ReasonTransientEvent, "%s is published for live views only and never logged; publish it, do not send it to the agent", typ))
	}
	schema, ok := reg.Lookup(typ)
	if !ok {
		return agents.Result{}, agents.Refuse(bus.Errorf(ReasonUnknownEvent, "no conversation event type %q (no schema)", typ))
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var whole map[string]any
	if err := dec.Decode(&whole); err != nil {
		return agents.Result{}, agents.Refuse(bus.Errorf(ReasonInvalidEvent, "%s %s: not a JSON event: %v", typ, env.Origin.ID, err))
	}
	if err := schema.Validate(whole); err != nil {
		if ve, ok := errors.AsType[*schemas.ValidationError](err); ok {
			f := ve.Fields[0]
			return agents.Result{}, agents.Refuse(bus.Errorf(ReasonInvalidEvent, "%s: %s (%s %s)", f.Pointer, f.Message, typ, env.Origin.ID))
		}
		return agents.Result{}, agents.Refuse(err)
	}
	var data conversation.Data
	if raw, err := json.Marshal(whole["data"]); err == nil {
		_ = json.Unmarshal(raw, &data) // the schema has checked its shape
	}
	ops := []agents.StateOp{
		agents.SetPath{Path: []string{"events"}, Value: env.State.Number("events") + 1},
		agents.SetPath{Path: []string{"last_event_id"}, Value: env.Origin.ID},
	}
	switch typ {
	case conversation.ToolRequested:
		ops = append(ops, agents.SetPath{Path: []string{"pending_tools", data.CallID}, Value: data.Name})
	case conversation.ToolCompleted, conversation.ToolFailed, conversation.ToolCancelled, conversation.ToolTimeout:
		ops = append(ops, agents.DeletePath{Path: []string{"pending_tools", data.CallID}})
	case conversation.LLMRequested:
		ops = append(ops, agents.SetPath{Path: []string{"llm_request"}, Value: env.Origin.ID})
	case conversation.LLMCompleted, conversation.LLMFailed:
		ops = append(ops, agents.SetPath{Path: []string{"llm_request"}, Value: ""})
	case conversation.Cancel:
		ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "cancelled"})
	case conversation.Stopped:
		ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "stopped"})
	case conversation.Resume:
		ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "active"})
	case conversation.UserMessage:
		// A person writing again reopens a cancelled conversation, as the
		// status read model does; a stopped one needs a resume.
		if env.State.String("status") == "cancelled" {
			ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "active"})
		}
	}
	return agents.Result{Ops: ops}, nil
}

// ConversationHasOpenWork reports whether state, a conversation agent's
// whole state as JSON, shows work a restart must close: a tool call
// requested and not answered, or an LLM call in flight.
func ConversationHasOpenWork(state json.RawMessage) (bool, error) {
	var s struct {
		Conversation struct {
			PendingTools map[string]string `json:"pending_tools"`
			LLMRequest   string            `json:"llm_request"`
		} `json:"conversation"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return false, fmt.Errorf("conversation state: %w", err)
	}
	return len(s.Conversation.PendingTools) > 0 || s.Conversation.LLMRequest != "", nil
}

// ConversationAgentID returns the agent id of a conversation:
// "<project-id>/<conversation-id>".
func ConversationAgentID(project, conv string) (string, error) {
	id := project + "/" + conv
	if err := bus.ValidateAgentID(id); err != nil {
		return "", fmt.Errorf("conversation %s: %w", id, err)
	}
	return id, nil
}

package conversation

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/schemas"
)

// AgentType is the name of the conversation agent type. Logs name it in
// every conversation's start record: it never changes.
const AgentType = "conversation"

// Error types of the conversation agent's Error directives.
const (
	ReasonInvalidEvent   = "invalid_event"   // the event fails its JSON Schema; the message names the pointer
	ReasonUnknownEvent   = "unknown_event"   // a conversation.* type with no schema
	ReasonTransientEvent = "transient_event" // conversation.assistant.delta, which is never logged
)

// NewAgent returns the conversation agent type, deciding with Loop. One agent runs per
// conversation: its id is "<project-id>/<conversation-id>", and the runtime
// gives agents of this type the log stream
// Stream(id) = "conversation/<project-id>/<conversation-id>"
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
// written to the log. The runtime must check IsTransient before
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
func NewAgent() (*agents.Definition, error) { return NewAgentWith(Loop) }

// LoopFunc decides what a conversation does next, after an event
// has passed validation: it gets the action's environment (the state
// before the event, under the state key "conversation") and the whole
// CloudEvent as JSON, and returns the state operations and directives the
// event implies. It must be pure, as any action: the same state and event
// give the same result, which is what lets a replay re-decide a whole
// conversation. Its operations must leave alone the members the conversation
// agent keeps itself (status, events, last_event_id, pending_tools,
// llm_request, worktree); they are applied after those.
//
// Loop is the one a node runs: it turns a user message into an LLM call,
// an answer's tool calls into tool runs, and their results into the next
// call; the assistant (projects/assistant) executes those directives.
type LoopFunc func(env agents.Env, event json.RawMessage) (agents.Result, error)

// NewAgentWith returns the conversation agent type with loop deciding
// after each valid event (nil: none, the agent only validates and tracks).
func NewAgentWith(loop LoopFunc) (*agents.Definition, error) {
	reg, err := schemas.Builtin()
	if err != nil {
		return nil, err
	}
	return agents.Define(agents.Spec{
		Name:        AgentType,
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
    "llm_request": {"type": "string", "default": "", "description": "id of the conversation.llm.requested in flight"},
    "worktree": {"type": "string", "default": "", "description": "the branch of the git worktree the conversation works in (conversation.started's); empty: the project's checkout"}
  }
}`

func conversationSkill(reg *schemas.Registry, loop LoopFunc) agents.Skill {
	return agents.Skill{
		Name:           "conversation",
		StateKey:       "conversation",
		Description:    "Conversation events: schema validation and pending work.",
		Schema:         conversationState,
		SignalPatterns: []string{TypePattern},
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
		Routes: []agents.Route{{Pattern: TypePattern, Action: "ingest"}},
	}
}

// ingest validates one event (params: the whole CloudEvent) and returns
// the state operations it implies.
func ingest(reg *schemas.Registry, env agents.Env, params json.RawMessage) (agents.Result, error) {
	typ := env.Origin.Type
	if IsTransient(typ) {
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
	var data Data
	if raw, err := json.Marshal(whole["data"]); err == nil {
		_ = json.Unmarshal(raw, &data) // the schema has checked its shape
	}
	ops := []agents.StateOp{
		agents.SetPath{Path: []string{"events"}, Value: env.State.Number("events") + 1},
		agents.SetPath{Path: []string{"last_event_id"}, Value: env.Origin.ID},
	}
	switch typ {
	case Started:
		if data.Worktree != nil {
			ops = append(ops, agents.SetPath{Path: []string{"worktree"}, Value: data.Worktree.Branch})
		}
	case ToolRequested:
		ops = append(ops, agents.SetPath{Path: []string{"pending_tools", data.CallID}, Value: data.Name})
	case ToolCompleted, ToolFailed, ToolCancelled, ToolTimeout:
		ops = append(ops, agents.DeletePath{Path: []string{"pending_tools", data.CallID}})
	case LLMRequested:
		ops = append(ops, agents.SetPath{Path: []string{"llm_request"}, Value: env.Origin.ID})
	case LLMCompleted, LLMFailed:
		ops = append(ops, agents.SetPath{Path: []string{"llm_request"}, Value: ""})
	case Cancel:
		ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "cancelled"})
	case Stopped:
		ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "stopped"})
	case Resume:
		ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "active"})
	case UserMessage:
		// A person writing again reopens a cancelled conversation, as the
		// status read model does; a stopped one needs a resume.
		if env.State.String("status") == "cancelled" {
			ops = append(ops, agents.SetPath{Path: []string{"status"}, Value: "active"})
		}
	}
	return agents.Result{Ops: ops}, nil
}

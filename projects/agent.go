package projects

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// AgentType is the name of the project agent type, and StreamPrefix the
// prefix of its agents' log streams: project <id> is the agent <id>, its
// stream project/<id>.
const (
	AgentType    = "project"
	StreamPrefix = "project"
)

// Stream returns the log stream of project id: "project/<id>".
func Stream(id string) string { return StreamPrefix + "/" + id }

// The signals a project agent takes. The engine sends them; each is
// committed to the project's stream before anything acts on it, and
// emitted after the commit on <prefix>.emit.<project-id>.<type> with the
// same data, so a UI follows a project with a plain NATS subscription on
// <prefix>.emit.<project-id>.project.>.
const (
	TypeStarted        = "project.started"         // StartedData: the project opened (or came back after a restart)
	TypeAssetsLoaded   = "project.assets.loaded"   // AssetsData: the first load of the asset set
	TypeAssetsReloaded = "project.assets.reloaded" // AssetsData with Changes: a reload that changed the set
	TypePolicyChanged  = "project.policy.changed"  // PolicyData: the policy file was edited (or created, or removed) and the project's tools run under the new policy from this entry on
	TypePolicyRefused  = "project.policy.refused"  // PolicyRefusedData: the policy file was edited into one the project cannot run under; the policy in force stays
	TypeToolStarted    = "project.tool.started"    // ToolData: a call entered the runner
	TypeToolCompleted  = "project.tool.completed"  // ToolData: a call succeeded
	TypeToolFailed     = "project.tool.failed"     // ToolData with Error: a call failed or was refused
	TypeConvStarted    = "project.conv.started"    // ConvData: a conversation of the project started (its child agent)
	TypeConvStopped    = "project.conv.stopped"    // ConvData with Reason: a conversation of the project was stopped
	TypeStopped        = "project.stopped"         // StoppedData: the project closed; its agent stops, and its conversations with it
)

// TypePrefix begins the type of every project signal: the project agent
// routes nothing else, and nobody but the engine may send these.
const TypePrefix = "project."

// Source is the CloudEvents source of the signals the engine sends.
const Source = "jido-bus:projects"

// ReasonWrongRoot refuses a project.started whose root or data dir is not
// the one the project's agent was started on: the root is fixed at start
// (its initial state) and no signal can move a project elsewhere.
const ReasonWrongRoot = "wrong_root"

// projectState is the agent's state schema. root and data_dir come from
// the start (initial_state) and no action changes them; policy and
// policy_source come from it too, and change with project.policy.changed;
// the rest follows the signals.
const projectState = `{
  "type": "object",
  "properties": {
    "root": {"type": "string", "default": "", "description": "the project root's real path"},
    "data_dir": {"type": "string", "default": ".jido", "description": "the data dir's name under the root"},
    "policy": {"type": "object", "default": {}, "description": "the policy in force, in the form of .jido/policy.yaml: as loaded at open, then as project.policy.changed set it"},
    "policy_source": {"type": "string", "default": "", "description": "where the policy came from: request, the policy file, or default"},
    "status": {"enum": ["open", "closed"], "default": "open"},
    "assets": {
      "type": "object",
      "properties": {
        "digest": {"type": "string"},
        "version": {"type": "integer", "minimum": 0},
        "diagnostics": {"type": "integer", "minimum": 0}
      },
      "default": {"digest": "", "version": 0, "diagnostics": 0}
    },
    "conversations": {"type": "array", "items": {"type": "string"}, "default": [], "description": "the ids (the part after <project-id>/) of the project's running conversations, in the order they started"},
    "tool_calls": {"type": "integer", "minimum": 0, "default": 0},
    "tool_failures": {"type": "integer", "minimum": 0, "default": 0}
  }
}`

// NewAgent returns the project agent type. Its Cmd is pure: each signal
// updates the small state above and re-emits itself (an Emit of the same
// type and data) for live views; project.stopped also stops the agent.
func NewAgent() (*agents.Definition, error) {
	return agents.Define(agents.Spec{
		Name:        AgentType,
		Description: "One open project: its root, policy and asset set's digest; every open, reload, close and tool call is an entry of its stream project/<id>.",
		Schema:      projectState,
		Actions: []agents.Action{
			{Name: "started", Description: "Record the project's start: its opening, or its return after a restart (root and policy as started).", Params: startedParams, Run: started},
			{Name: "assets", Description: "Record a load or reload of the asset set.", Params: assetsParams, Run: assetsChanged},
			{Name: "policy", Description: "Record the policy the project's tools run under from now on: its policy file changed.", Params: policyParams, Run: policyChanged},
			{Name: "policy_refused", Description: "Record a policy file the project did not take (the policy in force stays).", Params: policyRefusedParams, Run: policyRefused},
			{Name: "tool", Description: "Record a tool call's start, completion or failure.", Params: toolParams, Run: toolEvent},
			{Name: "conv", Description: "Record a conversation's start or stop in the project's conversations list.", Params: convParams, Run: convEvent},
			{Name: "gateway", Description: "Record a request a protocol gateway (MCP, A2A) brought to the project.", Params: gatewayParams, Run: gatewayRequest},
			{Name: "stopped", Description: "Record the close and stop the agent.", Run: stopped},
		},
		Routes: []agents.Route{
			{Pattern: TypeStarted, Action: "started"},
			{Pattern: TypeAssetsLoaded, Action: "assets"},
			{Pattern: TypeAssetsReloaded, Action: "assets"},
			{Pattern: TypePolicyChanged, Action: "policy"},
			{Pattern: TypePolicyRefused, Action: "policy_refused"},
			{Pattern: TypeToolStarted, Action: "tool"},
			{Pattern: TypeToolCompleted, Action: "tool"},
			{Pattern: TypeToolFailed, Action: "tool"},
			{Pattern: TypeConvStarted, Action: "conv"},
			{Pattern: TypeConvStopped, Action: "conv"},
			{Pattern: TypeGatewayRequest, Action: "gateway"},
			{Pattern: TypeStopped, Action: "stopped"},
		},
	})
}

const startedParams = `{
  "type": "object",
  "required": ["root", "data_dir"],
  "properties": {"root": {"type": "string", "minLength": 1}, "data_dir": {"type": "string", "minLength": 1}}
}`

const assetsParams = `{
  "type": "object",
  "required": ["digest", "version", "diagnostics"],
  "properties": {
    "digest": {"type": "string"},
    "version": {"type": "integer", "minimum": 0},
    "diagnostics": {"type": "integer", "minimum": 0}
  }
}`

const policyParams = `{
  "type": "object",
  "required": ["policy", "policy_source"],
  "properties": {"policy": {"type": "object"}, "policy_source": {"type": "string", "minLength": 1}}
}`

const policyRefusedParams = `{
  "type": "object",
  "required": ["file", "reason", "policy_source"],
  "properties": {"file": {"type": "string", "minLength": 1}, "reason": {"type": "string", "minLength": 1}, "policy_source": {"type": "string", "minLength": 1}}
}`

const toolParams = `{
  "type": "object",
  "required": ["call_id", "tool"],
  "properties": {"call_id": {"type": "string", "minLength": 1}, "tool": {"type": "string", "minLength": 1}}
}`

// echo is the Emit of the signal being handled: same type, same data.
func echo(env agents.Env, params json.RawMessage) (agents.Directive, error) {
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	e, err := agents.NewEmit(env.Origin.Type, params)
	return e, err
}

func started(env agents.Env, params json.RawMessage) (agents.Result, error) {
	var p StartedData
	if err := json.Unmarshal(params, &p); err != nil {
		return agents.Result{}, agents.Refuse(bus.Errorf(agents.ReasonInvalidParams, "%s: %v", TypeStarted, err))
	}
	if root := env.State.String("root"); p.Root != root || p.DataDir != env.State.String("data_dir") {
		return agents.Result{}, agents.Refuse(bus.Errorf(ReasonWrongRoot,
			"%s names root %q (data dir %q), but project %s was opened on %q (data dir %q); a project's root never changes: open another project",
			TypeStarted, p.Root, p.DataDir, env.AgentID, root, env.State.String("data_dir")))
	}
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	return agents.Result{
		Ops:        []agents.StateOp{agents.SetPath{Path: []string{"status"}, Value: "open"}},
		Directives: []agents.Directive{e},
	}, nil
}

func assetsChanged(env agents.Env, params json.RawMessage) (agents.Result, error) {
	var p AssetsData
	if err := json.Unmarshal(params, &p); err != nil {
		return agents.Result{}, agents.Refuse(bus.Errorf(agents.ReasonInvalidParams, "%s: %v", env.Origin.Type, err))
	}
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	return agents.Result{
		Ops: []agents.StateOp{agents.SetPath{Path: []string{"assets"}, Value: map[string]any{
			"digest": p.Digest, "version": p.Version, "diagnostics": p.Diagnostics,
		}}},
		Directives: []agents.Directive{e},
	}, nil
}

// policyChanged makes the policy the state keeps the new one, so that a
// restart rebuilds the project under it, and re-emits the signal.
func policyChanged(env agents.Env, params json.RawMessage) (agents.Result, error) {
	var p PolicyData
	if err := json.Unmarshal(params, &p); err != nil {
		return agents.Result{}, agents.Refuse(bus.Errorf(agents.ReasonInvalidParams, "%s: %v", TypePolicyChanged, err))
	}
	var doc map[string]any
	if err := json.Unmarshal(p.Policy, &doc); err != nil {
		return agents.Result{}, agents.Refuse(bus.Errorf(agents.ReasonInvalidParams, "%s: policy: %v", TypePolicyChanged, err))
	}
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	return agents.Result{
		Ops: []agents.StateOp{
			agents.SetPath{Path: []string{"policy"}, Value: doc},
			agents.SetPath{Path: []string{"policy_source"}, Value: p.PolicySource},
		},
		Directives: []agents.Directive{e},
	}, nil
}

// policyRefused records the refusal and re-emits it; the state's policy
// is the one still in force.
func policyRefused(env agents.Env, params json.RawMessage) (agents.Result, error) {
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	return agents.Result{Directives: []agents.Directive{e}}, nil
}

func toolEvent(env agents.Env, params json.RawMessage) (agents.Result, error) {
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	var ops []agents.StateOp
	switch env.Origin.Type {
	case TypeToolStarted:
		ops = append(ops, agents.SetPath{Path: []string{"tool_calls"}, Value: env.State.Number("tool_calls") + 1})
	case TypeToolFailed:
		ops = append(ops, agents.SetPath{Path: []string{"tool_failures"}, Value: env.State.Number("tool_failures") + 1})
	}
	return agents.Result{Ops: ops, Directives: []agents.Directive{e}}, nil
}

const gatewayParams = `{
  "type": "object",
  "required": ["gateway", "method", "caller", "result"],
  "properties": {
    "gateway": {"type": "string", "minLength": 1},
    "method": {"type": "string", "minLength": 1},
    "caller": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}},
    "result": {"type": "string", "minLength": 1}
  }
}`

// gatewayRequest records a gateway request and re-emits it for live views.
func gatewayRequest(env agents.Env, params json.RawMessage) (agents.Result, error) {
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	return agents.Result{Directives: []agents.Directive{e}}, nil
}

const convParams = `{
  "type": "object",
  "required": ["conversation", "id"],
  "properties": {"conversation": {"type": "string", "minLength": 1}, "id": {"type": "string", "minLength": 1}}
}`

// convEvent keeps the conversations list: a start appends the id (once),
// a stop removes it.
func convEvent(env agents.Env, params json.RawMessage) (agents.Result, error) {
	var p ConvData
	if err := json.Unmarshal(params, &p); err != nil {
		return agents.Result{}, agents.Refuse(bus.Errorf(agents.ReasonInvalidParams, "%s: %v", env.Origin.Type, err))
	}
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	list := []any{}
	for _, c := range env.State.List("conversations") {
		if c != p.Conversation {
			list = append(list, c)
		}
	}
	if env.Origin.Type == TypeConvStarted {
		list = append(list, p.Conversation)
	}
	return agents.Result{
		Ops:        []agents.StateOp{agents.SetPath{Path: []string{"conversations"}, Value: list}},
		Directives: []agents.Directive{e},
	}, nil
}

func stopped(env agents.Env, params json.RawMessage) (agents.Result, error) {
	e, err := echo(env, params)
	if err != nil {
		return agents.Result{}, err
	}
	// Emit first, then Stop: directives behind a Stop are dropped.
	return agents.Result{
		Ops:        []agents.StateOp{agents.SetPath{Path: []string{"status"}, Value: "closed"}},
		Directives: []agents.Directive{e, agents.Stop{Reason: "project closed"}},
	}, nil
}

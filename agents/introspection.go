package agents

import (
	"encoding/json"
	"slices"
)

// SkillInfo describes a skill as an agent type uses it.
type SkillInfo struct {
	Name     string `json:"name"`
	StateKey string `json:"state_key"`
	// Prefix is the first segment of the skill's action names and of its
	// own route patterns: the skill's name, or its alias.
	Prefix         string         `json:"prefix"`
	Description    string         `json:"description,omitempty"`
	Category       string         `json:"category,omitempty"`
	Vsn            string         `json:"vsn,omitempty"`
	Tags           []string       `json:"tags,omitempty"`
	SignalPatterns []string       `json:"signal_patterns,omitempty"`
	Actions        []string       `json:"actions"`
	Config         map[string]any `json:"config"`
}

// ActionInfo describes an action of an agent type.
type ActionInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Skill is the state key of the skill the action belongs to; empty for
	// the agent's own actions.
	Skill  string          `json:"skill,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// RouteInfo describes a route of an agent type.
type RouteInfo struct {
	Pattern  string `json:"pattern"`
	Priority int    `json:"priority"`
	Action   string `json:"action"`
	// Skill names the skill that declared the route ("calculator",
	// "calculator as calc2"); empty for the agent's own routes.
	Skill string `json:"skill,omitempty"`
}

// Name returns the agent type's name.
func (d *Definition) Name() string { return d.name }

// Description returns the agent type's description.
func (d *Definition) Description() string { return d.description }

// Strategy returns the agent type's strategy.
func (d *Definition) Strategy() Strategy { return d.strategy }

// Skills lists the attached skills in attachment order. The result is the
// caller's to modify.
func (d *Definition) Skills() []SkillInfo {
	out := make([]SkillInfo, len(d.skills))
	for i, inst := range d.skills {
		s := inst.skill
		out[i] = SkillInfo{
			Name: s.Name, StateKey: inst.key, Prefix: inst.prefix,
			Description: s.Description, Category: s.Category, Vsn: s.Vsn,
			Tags: slices.Clone(s.Tags), SignalPatterns: slices.Clone(inst.patterns),
			Actions: slices.Clone(inst.actions),
			Config:  cloneJSON(inst.config).(map[string]any),
		}
	}
	return out
}

// Actions lists every action by qualified name, the agent's own first,
// then each skill's, in definition order.
func (d *Definition) Actions() []ActionInfo {
	out := make([]ActionInfo, len(d.actionOrder))
	for i, name := range d.actionOrder {
		ba := d.actions[name]
		out[i] = ActionInfo{Name: name, Description: ba.action.Description}
		if ba.skill != nil {
			out[i].Skill = ba.skill.key
		}
		if ba.params != nil {
			out[i].Params = ba.params.Source()
		}
	}
	return out
}

// lookupSkill finds a skill by state key (which is also its alias) first,
// then by name, so both "calc2" and "calculator" answer.
func (d *Definition) lookupSkill(skill string) *skillInstance {
	for _, inst := range d.skills {
		if inst.key == skill {
			return inst
		}
	}
	for _, inst := range d.skills {
		if inst.skill.Name == skill {
			return inst
		}
	}
	return nil
}

// SkillConfig returns the validated config (defaults applied) of the skill
// with state key or name skill. The result is a copy.
func (d *Definition) SkillConfig(skill string) (map[string]any, bool) {
	inst := d.lookupSkill(skill)
	if inst == nil {
		return nil, false
	}
	return cloneJSON(inst.config).(map[string]any), true
}

// SkillState returns the state slice of the skill with state key or name
// skill in agent. The result is shared with agent: read it only.
func (d *Definition) SkillState(agent Agent, skill string) (State, bool) {
	inst := d.lookupSkill(skill)
	if inst == nil {
		return nil, false
	}
	return agent.State.Object(inst.key), true
}

// Schema returns the merged state schema: the agent's own, with each
// skill's state schema as the member under its state key.
func (d *Definition) Schema() json.RawMessage { return d.merged.Source() }

// DefaultState returns a copy of the state a new agent starts from.
func (d *Definition) DefaultState() State {
	return State(cloneJSON(map[string]any(d.defaultState)).(map[string]any))
}

// Routes lists the routes in the order a lookup ranks them when several
// match (see bus.Router).
func (d *Definition) Routes() []RouteInfo {
	rs := d.router.Routes()
	out := make([]RouteInfo, len(rs))
	for i, r := range rs {
		out[i] = RouteInfo{Pattern: r.Pattern, Priority: r.Priority, Action: r.Target, Skill: d.routeOwner[r.ID]}
	}
	return out
}

// ChildSpecs returns the children the skills' ChildSpecs hooks asked for,
// for the runtime to spawn when it starts an agent of this type.
func (d *Definition) ChildSpecs() []SpawnAgent {
	out := make([]SpawnAgent, len(d.children))
	for i, c := range d.children {
		c.Opts, _ = cloneJSON(c.Opts).(map[string]any)
		c.Meta, _ = cloneJSON(c.Meta).(map[string]any)
		out[i] = c
	}
	return out
}

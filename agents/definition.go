package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/schemas"
)

// Spec describes an agent type. Define checks it and compiles it into a
// Definition.
type Spec struct {
	// Name is the agent type's name ("counter"), segments of
	// [A-Za-z0-9_-]+ joined by '.'.
	Name        string
	Description string
	// Schema is the JSON Schema of the agent's own state members (an
	// object schema); its defaults seed a new agent's state. Skills' state
	// slices are added under their state keys (see Definition.Schema).
	Schema string
	// DefaultState is merged over the schema's defaults.
	DefaultState map[string]any
	// Actions are the agent's own actions, addressed by their names.
	Actions []Action
	// Routes map signal patterns to actions by qualified name (an own
	// action's name, or <skill-prefix>.<action>).
	Routes []Route
	Skills []Attachment
	// Strategy is Direct() when nil.
	Strategy Strategy
}

// Definition is a checked agent type: its actions, skills, router, merged
// state schema and default state. It is immutable and safe for concurrent
// use; every agent of the type shares it.
type Definition struct {
	name         string
	description  string
	strategy     Strategy
	merged       *schemas.Schema
	defaultState State
	actions      map[string]*boundAction
	actionOrder  []string
	skills       []*skillInstance
	router       *bus.Router[string]
	routeOwner   map[bus.RouteID]string
	children     []SpawnAgent
}

type boundAction struct {
	name   string
	action Action
	params *schemas.Schema
	// check proves params valid without the validator, for a schema of
	// the shape it reads (params_check.go); nil otherwise.
	check *paramsCheck
	skill *skillInstance // nil for the agent's own action
}

type skillInstance struct {
	skill    Skill
	key      string
	prefix   string
	config   map[string]any
	schema   *schemas.Schema
	patterns []string
	actions  []string
}

// childTag is the tag of the skill's child tag as this instance spawns
// it. Under an alias it is "<alias>-<tag>", so two copies of a skill never
// share a child, as they never share a route; without one it is the tag
// as written, which is what agents defined before aliases prefixed tags
// have in their logs. (A tag is one agent-id segment, so the alias joins
// it with "-", where a route's prefix takes a ".".)
func (s *skillInstance) childTag(tag string) string {
	if s.prefix == s.skill.Name {
		return tag
	}
	return s.prefix + "-" + tag
}

func (s *skillInstance) label() string {
	if s.prefix != s.skill.Name {
		return s.skill.Name + " as " + s.prefix
	}
	return s.skill.Name
}

// definer carries what Define has seen so far, so each check can say what a
// new item collides with.
type definer struct {
	spec      Spec
	d         *Definition
	ownKeys   map[string]bool
	stateKeys map[string]string // state key → skill label
	routeSeen map[routeSlot]string
}

type routeSlot struct {
	pattern  string
	priority int
}

func (df *definer) fail(skill, key string, format string, args ...any) error {
	return &DefineError{Agent: df.spec.Name, Skill: skill, Key: key, Err: fmt.Errorf(format, args...)}
}

func (df *definer) wrap(skill, key string, err error) error {
	return &DefineError{Agent: df.spec.Name, Skill: skill, Key: key, Err: err}
}

// Define checks spec and returns the agent type. Everything that can be
// wrong with a definition is found here, not when a signal arrives: invalid
// names and patterns, schemas that do not compile, skill configs that fail
// their schema, duplicate state keys, a skill state key that collides with
// the agent's own state members (or the FSM's key), duplicate actions, a
// route to an action that does not exist, two routes with the same pattern
// and priority, and a default state that fails the merged schema. The error
// is a *DefineError.
func Define(spec Spec) (*Definition, error) {
	df := &definer{
		spec:      spec,
		ownKeys:   make(map[string]bool),
		stateKeys: make(map[string]string),
		routeSeen: make(map[routeSlot]string),
		d: &Definition{
			name:        spec.Name,
			description: spec.Description,
			strategy:    spec.Strategy,
			actions:     make(map[string]*boundAction),
			router:      bus.NewRouter[string](),
			routeOwner:  make(map[bus.RouteID]string),
		},
	}
	if df.d.strategy == nil {
		df.d.strategy = Direct()
	}
	if err := bus.ValidateType(spec.Name); err != nil {
		return nil, df.wrap("", "name", err)
	}
	ownDoc, own, err := df.ownSchema()
	if err != nil {
		return nil, err
	}
	for _, a := range spec.Actions {
		if err := df.addAction(a.Name, a, nil); err != nil {
			return nil, err
		}
	}
	for _, at := range spec.Skills {
		if err := df.attach(at); err != nil {
			return nil, err
		}
	}
	for _, r := range spec.Routes {
		if err := df.addRoute("", r.Pattern, r.Priority, r.Action); err != nil {
			return nil, err
		}
	}
	for _, inst := range df.d.skills {
		if err := df.skillRoutes(inst); err != nil {
			return nil, err
		}
	}
	if err := df.mergeSchemas(ownDoc); err != nil {
		return nil, err
	}
	if err := df.defaults(own); err != nil {
		return nil, err
	}
	return df.d, nil
}

// MustDefine is Define for agent types built into a program, where a bad
// definition is a programming error: it panics with the *DefineError.
func MustDefine(spec Spec) *Definition {
	d, err := Define(spec)
	if err != nil {
		panic(err)
	}
	return d
}

func (df *definer) ownSchema() (map[string]any, *schemas.Schema, error) {
	for k := range df.spec.DefaultState {
		df.ownKeys[k] = true
	}
	if k, ok := df.d.strategy.(interface{ StateKey() string }); ok {
		df.ownKeys[k.StateKey()] = true
	}
	if df.spec.Schema == "" {
		return map[string]any{"type": "object"}, nil, nil
	}
	own, err := schemas.Compile(df.spec.Name+" state", []byte(df.spec.Schema))
	if err != nil {
		return nil, nil, df.wrap("", "schema", err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(df.spec.Schema), &doc); err != nil || doc == nil {
		return nil, nil, df.fail("", "schema", "the state schema must be a JSON object")
	}
	for _, k := range own.Properties() {
		df.ownKeys[k] = true
	}
	return doc, own, nil
}

func (df *definer) addAction(name string, a Action, inst *skillInstance) error {
	skill, key := "", a.Name
	if inst != nil {
		skill = inst.label()
	}
	if a.Name == "" {
		return df.fail(skill, "actions", "an action has no name")
	}
	if a.Run == nil {
		return df.fail(skill, key, "action has no Run function")
	}
	if _, dup := df.d.actions[name]; dup {
		return df.fail(skill, key, "action %q is defined twice", name)
	}
	ba := &boundAction{name: name, action: a, skill: inst}
	if a.Params != "" {
		s, err := schemas.Compile(name+" params", []byte(a.Params))
		if err != nil {
			return df.wrap(skill, key, err)
		}
		ba.params = s
		ba.check = planCheck(a.Params)
	}
	df.d.actions[name] = ba
	df.d.actionOrder = append(df.d.actionOrder, name)
	return nil
}

func isSegment(s string) bool { return bus.ValidateType(s) == nil && !strings.Contains(s, ".") }

func (df *definer) attach(at Attachment) error {
	s := at.Skill
	inst := &skillInstance{skill: s, key: s.StateKey, prefix: s.Name}
	if !isSegment(s.Name) {
		return df.fail(s.Name, "name", "skill name %q must be one segment of [A-Za-z0-9_-]+", s.Name)
	}
	if at.As != "" {
		if !isSegment(at.As) {
			return df.fail(s.Name, "as", "alias %q must be one segment of [A-Za-z0-9_-]+", at.As)
		}
		inst.key, inst.prefix = at.As, at.As
	}
	label := inst.label()
	if inst.key == "" {
		return df.fail(label, "state_key", "the skill has no state key")
	}
	if other, dup := df.stateKeys[inst.key]; dup {
		return df.fail(label, inst.key, "state key %q is already used by skill %q; attach one of them with an alias (UseAs)", inst.key, other)
	}
	if df.ownKeys[inst.key] {
		return df.fail(label, inst.key, "state key %q collides with a member of the agent's own state", inst.key)
	}
	df.stateKeys[inst.key] = label
	cfg, err := df.config(inst, at.Config)
	if err != nil {
		return err
	}
	inst.config = cfg
	if s.Schema != "" {
		sch, err := schemas.Compile(df.spec.Name+" "+label+" state", []byte(s.Schema))
		if err != nil {
			return df.wrap(label, "schema", err)
		}
		inst.schema = sch
	}
	for _, a := range s.Actions {
		name := inst.prefix + "." + a.Name
		if err := df.addAction(name, a, inst); err != nil {
			return err
		}
		inst.actions = append(inst.actions, name)
	}
	for _, p := range s.SignalPatterns {
		p = rePrefix(p, s.Name, inst.prefix)
		if err := bus.ValidatePattern(p); err != nil {
			return df.wrap(label, p, err)
		}
		inst.patterns = append(inst.patterns, p)
	}
	if s.ChildSpecs != nil {
		for _, c := range s.ChildSpecs(cloneJSON(cfg).(map[string]any)) {
			c.Tag = inst.childTag(c.Tag)
			if slices.ContainsFunc(df.d.children, func(o SpawnAgent) bool { return o.Tag == c.Tag }) {
				return df.fail(label, c.Tag, "child tag %q is used twice", c.Tag)
			}
			df.d.children = append(df.d.children, c)
		}
	}
	df.d.skills = append(df.d.skills, inst)
	return nil
}

func (df *definer) config(inst *skillInstance, given map[string]any) (map[string]any, error) {
	label := inst.label()
	cfg, err := normalizeObject(given)
	if err != nil {
		return nil, df.wrap(label, "config", err)
	}
	if inst.skill.ConfigSchema == "" {
		return cfg, nil
	}
	sch, err := schemas.Compile(df.spec.Name+" "+label+" config", []byte(inst.skill.ConfigSchema))
	if err != nil {
		return nil, df.wrap(label, "config_schema", err)
	}
	filled, _ := sch.ApplyDefaults(cfg).(map[string]any)
	if err := sch.Validate(filled); err != nil {
		key := "config"
		if ve, ok := errors.AsType[*schemas.ValidationError](err); ok {
			key += ve.Pointer()
		}
		return nil, df.wrap(label, key, err)
	}
	return filled, nil
}

func (df *definer) skillRoutes(inst *skillInstance) error {
	routes := slices.Clone(inst.skill.Routes)
	if inst.skill.Router != nil {
		routes = append(routes, inst.skill.Router(cloneJSON(inst.config).(map[string]any))...)
	}
	for _, r := range routes {
		pattern := rePrefix(r.Pattern, inst.skill.Name, inst.prefix)
		if err := df.addRoute(inst.label(), pattern, r.Priority, inst.prefix+"."+r.Action); err != nil {
			return err
		}
	}
	return nil
}

func (df *definer) addRoute(skill, pattern string, priority int, action string) error {
	if _, ok := df.d.actions[action]; !ok {
		return df.fail(skill, pattern, "route leads to action %q, which the agent does not have; actions are %q", action, df.d.actionOrder)
	}
	slot := routeSlot{pattern, priority}
	if other, dup := df.routeSeen[slot]; dup {
		return df.fail(skill, pattern, "two routes have pattern %q and priority %d (the other leads to %s); give one a different priority", pattern, priority, other)
	}
	id, err := df.d.router.Add(pattern, priority, action)
	if err != nil {
		return df.wrap(skill, pattern, err)
	}
	df.routeSeen[slot] = action
	df.d.routeOwner[id] = skill
	return nil
}

// mergeSchemas builds the merged state schema: the agent's own, with each
// skill's state schema as the member under its state key. Each skill schema
// keeps its own "$id" so its internal "$ref"s still resolve.
func (df *definer) mergeSchemas(doc map[string]any) error {
	doc = maps.Clone(doc)
	props := map[string]any{}
	if p, ok := doc["properties"].(map[string]any); ok {
		props = maps.Clone(p)
	}
	for _, inst := range df.d.skills {
		sub := map[string]any{"type": "object"}
		if inst.skill.Schema != "" {
			if err := json.Unmarshal([]byte(inst.skill.Schema), &sub); err != nil || sub == nil {
				return df.fail(inst.label(), "schema", "the state schema must be a JSON object")
			}
		}
		sub["$id"] = "skills/" + inst.key + ".json"
		props[inst.key] = sub
	}
	doc["properties"] = props
	src, err := json.Marshal(doc)
	if err != nil {
		return df.wrap("", "schema", err)
	}
	merged, err := schemas.Compile(df.spec.Name+" state", src)
	if err != nil {
		return df.wrap("", "schema", err)
	}
	df.d.merged = merged
	return nil
}

func (df *definer) defaults(own *schemas.Schema) error {
	st, err := normalizeObject(df.spec.DefaultState)
	if err != nil {
		return df.wrap("", "default_state", err)
	}
	if own != nil {
		st, _ = own.ApplyDefaults(st).(map[string]any)
	}
	for _, inst := range df.d.skills {
		var slice any = st[inst.key]
		if inst.schema != nil {
			slice = inst.schema.ApplyDefaults(slice)
		}
		if slice == nil {
			slice = map[string]any{}
		}
		st[inst.key] = slice
	}
	state := df.d.strategy.Init(State(st))
	if err := df.d.merged.Validate(map[string]any(state)); err != nil {
		key := "default_state"
		if ve, ok := errors.AsType[*schemas.ValidationError](err); ok {
			key += ve.Pointer()
		}
		return df.wrap("", key, err)
	}
	df.d.defaultState = state
	return nil
}

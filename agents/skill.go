package agents

import (
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// Skill bundles actions, their routes and a slice of state that an agent
// can take on (seed 002's Skills v2). The fields up to SignalPatterns are
// pure data that Define reads; the hooks are optional functions.
//
// Names in a skill are written under the skill's own name: its actions are
// addressed as <Name>.<action>, and a route pattern or signal pattern whose
// first segment is Name ("calculator.add", "calculator.*") belongs to the
// skill. When an agent attaches the skill under an alias, that first
// segment becomes the alias and the state lives under the alias, so two
// copies never share a route or a state key. Patterns that start
// elsewhere are taken as written.
//
// A Skill is a value: attaching it copies it, and Define never modifies it.
type Skill struct {
	// Name is the skill's identifier, one segment of [A-Za-z0-9_-]+.
	Name string
	// StateKey is the top-level member of the agent's state that holds
	// this skill's state.
	StateKey    string
	Description string
	Category    string
	Vsn         string
	Tags        []string
	// Actions run with the skill's state slice as Env.State and its
	// config as Env.Config; their state operations apply to the slice.
	Actions []Action
	// Routes map signal patterns to this skill's actions, by local name.
	Routes []Route
	// Schema is the JSON Schema of the skill's state slice; its defaults
	// give a new agent's slice.
	Schema string
	// ConfigSchema is the JSON Schema of the config an agent attaches the
	// skill with; Define validates the config and applies its defaults.
	ConfigSchema string
	// SignalPatterns select the signals the HandleSignal and
	// TransformResult hooks see.
	SignalPatterns []string

	// Mount prepares a new agent's skill state when the runtime starts the
	// agent. It is called by the runtime (Definition.Mount), never by Cmd.
	Mount func(state State, config map[string]any) (State, error)
	// Router returns further routes computed from the config. Define calls
	// it once; its routes join Routes.
	Router func(config map[string]any) []Route
	// HandleSignal rewrites a signal matching SignalPatterns before it is
	// routed. It runs in Step, so it must be pure like an action.
	HandleSignal func(sig bus.Signal, config map[string]any) (bus.Signal, error)
	// TransformResult rewrites the directives produced for a signal
	// matching SignalPatterns. It runs in Step, so it must be pure.
	TransformResult func(sig bus.Signal, directives []Directive, config map[string]any) ([]Directive, error)
	// ChildSpecs lists the children the runtime spawns when it starts an
	// agent with this skill. Define calls it once; the runtime reads the
	// result from Definition.ChildSpecs. Under an alias each tag becomes
	// "<alias>-<tag>" (Env.ChildTag gives it to the skill's actions).
	ChildSpecs func(config map[string]any) []SpawnAgent
}

// Attachment is a skill as one agent uses it: with a config and, when the
// skill is attached more than once, an alias.
type Attachment struct {
	Skill  Skill
	Config map[string]any
	// As, when set, replaces the skill's name in its state key, action
	// names and route prefix, and prefixes its child tags.
	As string
}

// Use attaches skill with config (nil for none).
func Use(skill Skill, config map[string]any) Attachment {
	return Attachment{Skill: skill, Config: config}
}

// UseAs attaches skill under alias, with its own state key and route
// prefix, so the same skill can serve an agent twice.
func UseAs(skill Skill, alias string, config map[string]any) Attachment {
	return Attachment{Skill: skill, Config: config, As: alias}
}

// Route maps a signal pattern to an action. Priority (-100..100) orders
// routes of equally specific patterns, higher first; see bus.Router.
type Route struct {
	Pattern  string
	Action   string
	Priority int
}

// rePrefix rewrites name's first segment from the skill's name to prefix
// when it is the skill's name.
func rePrefix(name, skillName, prefix string) string {
	if name == skillName {
		return prefix
	}
	if rest, ok := strings.CutPrefix(name, skillName+"."); ok {
		return prefix + "." + rest
	}
	return name
}

package projects

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// ConfigFile is the name of a project's assistant settings under its data
// dir (".jido/config.yaml"):
//
//	llm:
//	  provider: openai          # one of the node's providers: openai, anthropic, scripted, or its operator's
//	  model: gpt-4o-mini
//	  temperature: 0.2
//	  max_tokens: 4096
//	  timeout_ms: 120000
//	  script: .jido/demo.jsonl  # scripted: the turns to play
//	approval_timeout_ms: 300000 # how long a call waits for a person
//	instructions: [CLAUDE.md, docs/conventions.md] # more instructions for the model, besides AGENTS.md and .jido/instructions.md
//	hooks: {events: [tool.before], timeout_ms: 2000, default: deny} # ask <prefix>.hook.<project>.<event> (or command: [prog]) about each tool call
//	mcp_servers:                # MCP servers whose tools join the catalog as <server>.<tool> (MCPServerConfig)
//	  notes: {command: [/usr/local/bin/notes-mcp]}
//	worktree: true              # each conversation in its own git worktree and branch (worktree.go)
const ConfigFile = "config.yaml"

// maxConfigBytes bounds the settings file.
const maxConfigBytes = 64 << 10

// Settings returns project id's assistant settings, read from its data
// dir at each call (an edit takes effect at the next LLM call), with its
// instructions for the model (AGENTS.md, <data dir>/instructions.md), and
// its root. A missing file gives the zero settings; the LLM call then says
// what to set.
func (e *Engine) Settings(id string) (assistant.Settings, string, error) {
	p, err := e.usable(id)
	if err != nil {
		return assistant.Settings{}, "", err
	}
	var s assistant.Settings
	name := path.Join(p.dataDir, ConfigFile)
	data, err := p.rootDir.ReadFile(name, maxConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return s, p.root, bus.Errorf(bus.ReasonInvalidRequest, "project %s: read %s: %v", id, name, err)
	default:
		if err := refuseEndpoint(data); err != nil {
			return s, p.root, bus.Errorf(bus.ReasonInvalidRequest, "%s of project %s: %v", name, id, err)
		}
		// mcp_servers: is the engine's (mcp_servers.go), read at open;
		// it is checked here too, so that a mistake in it is said.
		var f struct {
			assistant.Settings `yaml:",inline"`
			MCPServers         map[string]MCPServerConfig `yaml:"mcp_servers"`
		}
		if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
			return s, p.root, bus.Errorf(bus.ReasonInvalidRequest, "project %s: %s: %s", id, name, yaml.FormatError(err, false, false))
		}
		if err := checkMCPServers(f.MCPServers, name); err != nil {
			return s, p.root, bus.Errorf(bus.ReasonInvalidRequest, "project %s: %v", id, err)
		}
		s = f.Settings
		if err := s.Hooks.Check(); err != nil {
			return s, p.root, bus.Errorf(bus.ReasonInvalidRequest, "project %s: %s: %v", id, name, err)
		}
	}
	if s.Instructions, s.InstructionFiles, err = instructions(p.box(), p.dataDir, s.InstructionPaths); err != nil {
		return s, p.root, fmt.Errorf("project %s: %w", id, err)
	}
	return s, p.root, nil
}

// refuseEndpoint refuses a project config that says where a key goes
// (llm.base_url) or which variable is one (llm.api_key_env): with both, a
// project's own file sent JIDO_PASSWORD as a bearer token to a listener
// of its choosing. Endpoints and keys are the node operator's; a project
// names one of its providers.
func refuseEndpoint(data []byte) error {
	var f struct {
		LLM struct {
			BaseURL   *string `yaml:"base_url"`
			APIKeyEnv *string `yaml:"api_key_env"`
		} `yaml:"llm"`
	}
	if yaml.Unmarshal(data, &f) != nil {
		return nil // the strict decoding says what is wrong
	}
	var keys []string
	if f.LLM.BaseURL != nil {
		keys = append(keys, "llm.base_url")
	}
	if f.LLM.APIKeyEnv != nil {
		keys = append(keys, "llm.api_key_env")
	}
	if len(keys) == 0 {
		return nil
	}
	verb := "is"
	if len(keys) > 1 {
		verb = "are"
	}
	return fmt.Errorf("%s %s refused: which key is sent where is the node operator's choice, not a project's (serve --provider NAME=KIND,base_url=URL,key_env=VAR, or providers: in the serve config); remove it and name one of the node's providers in llm.provider", strings.Join(keys, " and "), verb)
}

// NeedsApproval reports whether a person must approve tool before it
// runs in project id, and the reason to show them: the project's policy
// asks (mode ask), or the conversation's permission mode is ask and the
// tool writes or runs by its Safety. In plan mode such a tool is refused
// with the runner's own plan_mode error (a *tools.Error), so that the
// assistant records the refusal without a tool.started; the runner
// refuses it again if it is called anyway.
func (e *Engine) NeedsApproval(id, tool, mode string) (bool, string, error) {
	p, err := e.usable(id)
	if err != nil {
		return false, "", err
	}
	if t, ok := p.catalog().Get(tool); ok {
		if te := tools.CheckMode(tools.ToolCall{Name: tool, Mode: mode}, t.Safety); te != nil {
			if te.Type != tools.ReasonApprovalRequired {
				return false, "", te
			}
			if p.box().Policy.ToolMode(tool) != policy.ModeAsk {
				return true, te.Message, nil
			}
		}
	}
	if p.box().Policy.ToolMode(tool) == policy.ModeAsk {
		return true, "the project's policy asks a person before " + tool + " runs (tools: in .jido/policy.yaml)", nil
	}
	return false, "", nil
}

// InstructionsFile is the project's own instructions for its model, under
// its data dir (".jido/instructions.md"), beside AGENTS.md at its root.
const InstructionsFile = "instructions.md"

// AgentsFile is the instructions file coding agents share (agents.md):
// a project that has one for other tools has told jido-bus's model too.
const AgentsFile = "AGENTS.md"

// MaxInstructionsBytes bounds each instructions file: they go with every
// LLM call.
const MaxInstructionsBytes = 64 << 10

// MaxInstructionPaths bounds the files instructions: in config.yaml may
// name.
const MaxInstructionPaths = 8

// instructions reads a project's instructions for its model: AGENTS.md at
// its root, then the files its config names (named), then <data
// dir>/instructions.md, through the project's root (a link out of it is
// refused like a tool's). AGENTS.md and instructions.md count when they
// exist; a file named must exist, and is read as read_file would read it:
// the policy's path rules apply, so a project's config cannot send the
// model a file its tools may not read (a .env). It returns their texts
// joined and the files they came from.
func instructions(box *policy.Sandbox, dataDir string, named []string) (string, []string, error) {
	if len(named) > MaxInstructionPaths {
		return "", nil, bus.Errorf(bus.ReasonInvalidRequest, "instructions: in %s names %d files; at most %d go with every call to the model", path.Join(dataDir, ConfigFile), len(named), MaxInstructionPaths)
	}
	names := append(append([]string{AgentsFile}, named...), path.Join(dataDir, InstructionsFile))
	seen := map[string]bool{}
	var texts, files []string
	for i, name := range names {
		fixed := i == 0 || i == len(names)-1
		if !fixed {
			name = path.Clean(name)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		var data []byte
		var err error
		if fixed {
			data, err = box.Root.ReadFile(name, MaxInstructionsBytes)
		} else {
			data, err = box.ReadFile("read_file", name, MaxInstructionsBytes)
		}
		if errors.Is(err, fs.ErrNotExist) {
			if !fixed {
				return "", nil, bus.Errorf(bus.ReasonInvalidRequest, "the project's instructions %s (instructions: in %s) do not exist: create the file or take it off the list", name, path.Join(dataDir, ConfigFile))
			}
			continue
		}
		if bus.ErrorType(err) == bus.ReasonTooLarge {
			return "", nil, bus.Errorf(bus.ReasonInvalidRequest, "the project's instructions %s are over %d bytes, and they go with every call to its model: shorten them", name, MaxInstructionsBytes)
		}
		if err != nil {
			return "", nil, bus.Errorf(bus.ReasonInvalidRequest, "the project's instructions %s: %s", name, bus.AsError(err).Message)
		}
		if t := strings.TrimSpace(string(data)); t != "" {
			texts = append(texts, t)
			files = append(files, name)
		}
	}
	if len(texts) == 0 {
		return "", nil, nil
	}
	return strings.Join(texts, "\n\n"), files, nil
}

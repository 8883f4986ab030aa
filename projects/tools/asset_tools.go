package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
)

// Assets are what the asset tools derive from: the Snapshot's skills and
// commands, the loaded workflows and the skill graph (nil: no graph tools).
// Workflows and Graph are separate fields until the Snapshot carries them.
type Assets struct {
	Snapshot  *assets.Snapshot
	Workflows []*assets.Workflow
	Graph     *assets.Graph
}

// AssetTools are the tools of a project's assets, named by
// assets.ToolName: command_<name>, skill_<name>, workflow_<name> and
// skill_graph_search|node|neighbours|path.
// Build a new catalog with them after every asset reload.
func AssetTools(a Assets, l Limits) []Tool {
	l = l.withDefaults()
	var ts []Tool
	if a.Snapshot != nil {
		for _, name := range sortedKeys(a.Snapshot.Commands) {
			ts = append(ts, commandTool(a.Snapshot.Commands[name], l))
		}
		for _, name := range sortedKeys(a.Snapshot.Skills) {
			ts = append(ts, skillTool(a.Snapshot.Skills[name]))
		}
	}
	for _, w := range a.Workflows {
		ts = append(ts, workflowTool(w))
	}
	if a.Graph != nil {
		ts = append(ts, graphTools(a.Graph)...)
	}
	return ts
}

func sortedKeys[T any](m map[string]T) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

type include struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type commandOutput struct {
	Text     string    `json:"text"`
	Includes []include `json:"includes,omitempty"`
}

func commandTool(cmd *assets.Command, l Limits) Tool {
	desc := sentence(cmd.Description)
	if desc == "" {
		desc = "The project's /" + cmd.Name + " command."
	}
	if cmd.WhenToUse != "" {
		desc += " " + sentence(cmd.WhenToUse)
	}
	if cmd.ArgumentHint != "" {
		desc += " Arguments: " + sentence(cmd.ArgumentHint)
	}
	return Tool{
		Name:        assets.ToolName(assets.KindCommand, cmd.Name),
		Description: desc + " Returns the command's prompt with its arguments filled in and the files it includes (@path) read.",
		InputSchema: commandSchema(cmd),
		OutputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"},"includes":{"type":"array",
			"items":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}},
			"required":["text"]}`),
		Safety: Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Arguments []string          `json:"arguments"`
				Named     map[string]string `json:"named"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			x, err := cmd.Expand(a.Arguments, a.Named)
			if errors.Is(err, assets.ErrMissingArgument) {
				return nil, Errorf(ReasonInvalidArgs, "%v", err)
			}
			if err != nil {
				return nil, err
			}
			out := commandOutput{Text: x.Text}
			// Includes go through the Sandbox like any file a tool reads.
			for _, p := range x.Includes {
				data, err := c.Sandbox.ReadFile(c.Name, p, l.MaxFileBytes)
				if err != nil {
					return nil, err
				}
				out.Includes = append(out.Includes, include{Path: p, Content: string(data)})
			}
			return out, nil
		},
	}
}

// commandSchema is the input schema of cmd's tool: "named" holds the
// {{name}} placeholders its body uses, each required, and "arguments" the
// positional ones when its body takes them ($ARGUMENTS, $1…$9).
func commandSchema(cmd *assets.Command) json.RawMessage {
	named, positional := cmd.Arguments()
	props := map[string]any{}
	var required []string
	if positional {
		desc := "positional arguments: $1…$9 in the command, all of them joined by blanks as $ARGUMENTS"
		if cmd.ArgumentHint != "" {
			desc += " (" + cmd.ArgumentHint + ")"
		}
		props["arguments"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
	}
	if len(named) > 0 {
		each := map[string]any{}
		for _, n := range named {
			each[n] = map[string]any{"type": "string", "description": "{{" + n + "}} in the command"}
		}
		props["named"] = map[string]any{"type": "object", "properties": each, "required": named, "additionalProperties": false,
			"description": "the command's named arguments, its {{name}} placeholders"}
		required = append(required, "named")
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if required != nil {
		schema["required"] = required
	}
	b, _ := json.Marshal(schema) // maps of strings always encode
	return b
}

// sentence is s trimmed, ending as a sentence does.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?") {
		return s
	}
	return s + "."
}

// skillOutput is what a skill's tool returns: its instructions, and
// where the files they name are (an Agent Skills body names them relative
// to its folder: references/api.md, scripts/run.py), so the model reads
// them with read_file.
type skillOutput struct {
	Name  string   `json:"name"`
	Body  string   `json:"body"`
	Dir   string   `json:"dir,omitempty"`
	Files []string `json:"files,omitempty"`
	// More is true when the folder holds more files than Files lists.
	More bool `json:"more_files,omitempty"`
}

func (o skillOutput) OutputText() string { return o.Body }

func skillTool(s *assets.Skill) Tool {
	desc := sentence(s.Description)
	if s.WhenToUse != "" {
		desc += " " + sentence(s.WhenToUse)
	}
	return Tool{
		Name: assets.ToolName(assets.KindSkill, s.Name),
		Description: strings.TrimSpace(desc + " Returns the skill's instructions (its SKILL.md) to follow, its folder (dir) and the files beside them, " +
			"which read_file reads as <dir>/<file>."),
		InputSchema: []byte(`{"type":"object","additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"},"body":{"type":"string"},"dir":{"type":"string"},
			"files":{"type":"array","items":{"type":"string"}},"more_files":{"type":"boolean"}},"required":["name","body"]}`),
		TextField: "body",
		Safety:    Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			body, err := s.Body()
			if errors.Is(err, assets.ErrChanged) {
				return nil, bus.Errorf("changed", "%v", err)
			}
			if err != nil {
				return nil, err
			}
			out := skillOutput{Name: s.Name, Body: body}
			if dir, err := filepath.Rel(c.Sandbox.Root.Path(), s.Dir()); err == nil && filepath.IsLocal(dir) {
				out.Dir = filepath.ToSlash(dir)
				if out.Files, out.More, err = s.Resources(); err != nil {
					c.Logf("the files beside %s are not listed: %v", s.Source.File, err)
				}
			}
			return out, nil
		},
	}
}

func workflowTool(w *assets.Workflow) Tool {
	var uses []string
	for _, st := range w.Steps {
		uses = append(uses, st.Tool)
	}
	return Tool{
		Name:         assets.ToolName(assets.KindWorkflow, w.Name),
		Description:  fmt.Sprintf("%s Runs %s, in order; returns each step's output.", sentence(w.Description), strings.Join(uses, ", then ")),
		InputSchema:  w.InputSchema(),
		OutputSchema: []byte(`{"type":"object","properties":{"steps":{"type":"array"}},"required":["steps"]}`),
		// What its steps' tools do, which the catalog adds up (Uses).
		Safety:    Safety{Reads: true},
		Uses:      uses,
		resumable: true,
		Func: func(ctx context.Context, c *Call) (any, error) {
			var in map[string]any
			if err := decodeArgs(c, &in); err != nil {
				return nil, err
			}
			// Each step goes back through the runner: authorized, timed,
			// observed as a child of this call.
			step := func(ctx context.Context, tool string, args map[string]any) (any, error) {
				raw, err := json.Marshal(args)
				if err != nil {
					return nil, err
				}
				res, err := c.Run(ctx, ToolCall{Name: tool, Args: raw})
				if err != nil {
					return nil, err
				}
				var out any
				if err := json.Unmarshal(res.Data, &out); err != nil {
					return nil, err
				}
				return out, nil
			}
			// A resumed call goes on after the steps that ran before
			// the node stopped (Runner.Resume); c.done is nil otherwise.
			outs, err := w.Resume(ctx, in, c.done, step)
			if ie, ok := errors.AsType[*assets.InputError](err); ok {
				return nil, Errorf(ReasonInvalidArgs, "%v", ie)
			}
			if se, ok := errors.AsType[*assets.StepError](err); ok {
				typ := ReasonToolFailed
				if e, ok := errors.AsType[*Error](se.Err); ok {
					typ = e.Type
				}
				return nil, &Error{Type: typ, Message: se.Error(), Details: map[string]any{"step": se.Step, "tool": se.Tool, "completed": outs}}
			}
			if err != nil {
				return nil, err
			}
			return map[string]any{"steps": outs}, nil
		},
	}
}

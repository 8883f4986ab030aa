package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

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

// AssetTools are the tools of a project's assets: command.<name>,
// skill.<name>, workflow.<name> and skill_graph.search|node|neighbours|path.
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
	desc := cmd.Description
	if desc == "" {
		desc = "The project's /" + cmd.Name + " command."
	}
	if cmd.ArgumentHint != "" {
		desc += " Arguments: " + cmd.ArgumentHint
	}
	return Tool{
		Name:        "command." + cmd.Name,
		Description: desc + " Returns the command's prompt with its arguments filled in and its @file includes read.",
		InputSchema: []byte(`{"type":"object","properties":{
			"arguments":{"type":"array","items":{"type":"string"},"description":"positional arguments ($1…$9, $ARGUMENTS)"},
			"named":{"type":"object","additionalProperties":{"type":"string"},"description":"named arguments ({{name}})"}},
			"additionalProperties":false}`),
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

func skillTool(s *assets.Skill) Tool {
	return Tool{
		Name:         "skill." + s.Name,
		Description:  s.Description,
		InputSchema:  []byte(`{"type":"object","additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"},"body":{"type":"string"}},"required":["name","body"]}`),
		Safety:       Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			body, err := s.Body()
			if errors.Is(err, assets.ErrChanged) {
				return nil, bus.Errorf("changed", "%v", err)
			}
			if err != nil {
				return nil, err
			}
			return map[string]string{"name": s.Name, "body": body}, nil
		},
	}
}

func workflowTool(w *assets.Workflow) Tool {
	return Tool{
		Name:         "workflow." + w.Name,
		Description:  w.Description,
		InputSchema:  w.InputSchema(),
		OutputSchema: []byte(`{"type":"object","properties":{"steps":{"type":"array"}},"required":["steps"]}`),
		Safety:       Safety{Reads: true, Writes: true, Runs: true}, // whatever its steps do
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
			outs, err := w.Run(ctx, in, step)
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

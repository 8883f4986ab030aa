package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// positionalArg is the prompt argument holding a command's positional
// arguments ($ARGUMENTS, $1…$9), split on blanks.
const positionalArg = "arguments"

type promptDef struct {
	project, command string
	prompt           *sdk.Prompt
	fingerprint      string
}

// projectPrompts adds project's commands, by prompt name on s, to into.
func (s *server) projectPrompts(project string, into map[string]promptDef) {
	rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project, Kind: projects.KindCommand})
	if err != nil {
		return
	}
	for _, c := range rep.Commands {
		p := &sdk.Prompt{Name: s.qualify(project, c.Name), Description: c.Description, Arguments: promptArgs(c)}
		into[p.Name] = promptDef{project: project, command: c.Name, prompt: p, fingerprint: fingerprint(p)}
	}
}

// promptArgs are a command's arguments (assets.Command.Arguments): its
// {{name}} placeholders, each required (expanding without one is an
// error), and "arguments" when the body takes positional ones.
func promptArgs(c *assets.Command) []*sdk.PromptArgument {
	var args []*sdk.PromptArgument
	named, positional := c.Arguments()
	for _, n := range named {
		args = append(args, &sdk.PromptArgument{Name: n, Required: true, Description: "{{" + n + "}} in the command"})
	}
	if positional && !slices.Contains(named, positionalArg) {
		desc := "the command's arguments, separated by blanks ($ARGUMENTS, $1…$9)"
		if c.ArgumentHint != "" {
			desc += ": " + c.ArgumentHint
		}
		args = append(args, &sdk.PromptArgument{Name: positionalArg, Description: desc})
	}
	return args
}

type commandOutput struct {
	Text     string `json:"text"`
	Includes []struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"includes"`
}

// getPrompt is the handler of project's command: the expansion the
// command.<name> tool makes, through the runner.
func (s *server) getPrompt(project, command string) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		start := time.Now()
		in := struct {
			Arguments []string          `json:"arguments,omitempty"`
			Named     map[string]string `json:"named,omitempty"`
		}{Named: map[string]string{}}
		for k, v := range req.Params.Arguments {
			if k == positionalArg {
				in.Arguments = strings.Fields(v)
			} else {
				in.Named[k] = v
			}
		}
		args, _ := json.Marshal(in)
		name := assets.ToolName(assets.KindCommand, command)
		out, err := s.g.h.CallTool(ctx, project, tools.ToolCall{Name: name, Args: args})
		if err == nil && !out.OK && out.Error != nil {
			err = out.Error
		}
		var co commandOutput
		if err == nil {
			if uerr := json.Unmarshal(out.Data, &co); uerr != nil {
				err = tools.Errorf(tools.ReasonToolFailed, "%s: its output is not a command's expansion: %v", name, uerr)
			}
		}
		err = s.record(ctx, req, project, "prompts/get", command, start, err)
		if err != nil {
			e := errorResult(err).Content[0].(*sdk.TextContent).Text
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompt " + req.Params.Name + ": " + e}
		}
		res := &sdk.GetPromptResult{Description: "/" + command, Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: co.Text}}}}
		for _, inc := range co.Includes {
			res.Messages = append(res.Messages, &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: "@" + inc.Path + ":\n" + inc.Content}})
		}
		return res, nil
	}
}

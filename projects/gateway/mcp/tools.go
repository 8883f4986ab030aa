package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// maxToolName is the longest MCP tool name.
const maxToolName = 128

type toolDef struct {
	project, name string // the catalog's name
	tool          *sdk.Tool
	fingerprint   string
}

// projectTools adds project's tools, by their MCP name on s, to into.
func (s *server) projectTools(project string, into map[string]toolDef) {
	ds, err := s.g.h.ToolDetails(project)
	if err != nil {
		return // closed since: it offers nothing
	}
	for _, d := range ds {
		name := d.Name
		if !validToolName(name) {
			name = d.APIName
		}
		name = s.qualify(project, name)
		if len(name) > maxToolName {
			name = s.qualify(project, d.APIName)
		}
		if len(name) > maxToolName {
			s.g.log.Warn("a tool is left out of MCP: its name is too long", "project", project, "tool", d.Name)
			continue
		}
		t := mcpTool(name, d)
		into[name] = toolDef{project: project, name: d.Name, tool: t, fingerprint: fingerprint(t)}
	}
}

func validToolName(n string) bool {
	if n == "" || len(n) > maxToolName {
		return false
	}
	for i := 0; i < len(n); i++ {
		if b := n[i]; !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b == '.') {
			return false
		}
	}
	return true
}

// mcpTool is d as MCP lists it; the hints come from the catalog's Safety.
func mcpTool(name string, d tools.Detail) *sdk.Tool {
	changes := d.Safety.Writes || d.Safety.Runs
	runs := d.Safety.Runs
	t := &sdk.Tool{
		Name:        name,
		Description: d.Description,
		InputSchema: json.RawMessage(d.InputSchema),
		Annotations: &sdk.ToolAnnotations{
			ReadOnlyHint:    !changes,
			DestructiveHint: &changes,
			IdempotentHint:  !changes,
			OpenWorldHint:   &runs,
		},
	}
	if len(d.OutputSchema) > 0 {
		t.OutputSchema = json.RawMessage(d.OutputSchema)
	}
	return t
}

// callTool is the handler of project's tool name: a call through the
// runner, asking a person first when the policy says ask.
func (s *server) callTool(project, name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		call := tools.ToolCall{Name: name, Args: req.Params.Arguments}
		if len(call.Args) == 0 || string(call.Args) == "null" {
			call.Args = json.RawMessage(`{}`)
		}
		ask, reason, err := s.g.h.NeedsApproval(project, name)
		if err != nil {
			return errorResult(s.record(ctx, req, project, "tools/call", name, start, err)), nil
		}
		if ask {
			approved, res, err := s.approve(req, project, name, reason, call.Args)
			if res != nil { // the question, asked of the client
				return res, nil
			}
			if err != nil {
				return errorResult(s.record(ctx, req, project, "tools/call", name, start, err)), nil
			}
			call.Approved = approved
		}
		out, err := s.g.h.CallTool(ctx, project, call)
		if err == nil && !out.OK && out.Error != nil {
			err = out.Error
		}
		if err != nil && !call.Approved && ask && errType(err) == tools.ReasonApprovalRequired {
			err = &tools.Error{Type: tools.ReasonApprovalRequired, Message: noElicitation(name, reason)}
		}
		if err := s.record(ctx, req, project, "tools/call", name, start, err); err != nil {
			return errorResult(err), nil
		}
		return s.result(project, out), nil
	}
}

// result is a successful call's MCP result.
func (s *server) result(project string, out tools.Result) *sdk.CallToolResult {
	data := out.Data
	if len(data) == 0 {
		data = json.RawMessage(`null`)
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}
	if len(out.Artifacts) == 0 {
		res.StructuredContent = data
	}
	for _, a := range out.Artifacts {
		s.artifacts.add(project, a.ID)
		size := a.Size
		res.Content = append(res.Content, &sdk.ResourceLink{
			URI:         artifactURI(project, a.ID),
			Name:        a.ID,
			Description: "the whole output of the call (the text above is a preview)",
			MIMEType:    a.MediaType,
			Size:        &size,
		})
	}
	return res
}

// errorResult is a failed or refused call: isError with the runner's
// error (type, message, details) as JSON text.
func errorResult(err error) *sdk.CallToolResult {
	e := &tools.Error{Type: errType(err), Message: err.Error()}
	if te, ok := errors.AsType[*tools.Error](err); ok {
		e = te
	} else if be, ok := errors.AsType[*bus.Error](err); ok {
		e.Message = be.Message
	}
	b, _ := json.Marshal(e)
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

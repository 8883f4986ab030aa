package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// maxToolName is the longest MCP tool name.
const maxToolName = 128

type toolDef struct {
	project     string
	detail      tools.Detail // Name is the catalog's
	tool        *sdk.Tool
	fingerprint string
	// handler serves a tool of the gateway's own (chat); nil for the
	// catalog's, served through the runner.
	handler sdk.ToolHandler
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
		into[name] = toolDef{project: project, detail: d, tool: t, fingerprint: fingerprint(t)}
	}
	// The chat tool, where the host drives the assistant; a catalog tool
	// of the same name keeps it (the project's own comes first).
	if c, ok := s.g.h.(Conversations); ok {
		t := s.chatTool(project)
		if _, taken := into[t.Name]; taken {
			s.g.log.Warn("the chat tool is left out of MCP: the project has a tool of that name", "project", project)
			return
		}
		into[t.Name] = toolDef{project: project, tool: t, fingerprint: fingerprint(t), handler: s.chat(project, c)}
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
		t.OutputSchema = withStandIn(d.OutputSchema)
	}
	return t
}

// standIn is the structured content of an output too large to return
// inline: the runner stored it as an artifact, the result links to it.
var standIn = map[string]any{
	"type":        "object",
	"description": "an output too large to return inline: the whole of it is the resource the result's resource_link names",
	"properties": map[string]any{
		"artifact": map[string]any{"type": "string", "description": "the stored output's id, sha256:<hex>"},
		"size":     map[string]any{"type": "integer", "description": "its size in bytes"},
		"preview":  map[string]any{"type": "string", "description": "its first bytes"},
	},
	"required": []string{"artifact", "size"},
}

// withStandIn is a tool's output schema as MCP lists it: the tool's, or
// the artifact stand-in, since a client checks every result's structured
// content against it (the TypeScript SDK refuses a result of a tool with
// an output schema that has none). $defs and $schema stay at the root,
// where a "$ref": "#/$defs/…" of the tool's schema still finds them.
func withStandIn(schema json.RawMessage) json.RawMessage {
	var own map[string]any
	if json.Unmarshal(schema, &own) != nil || own == nil {
		return schema
	}
	out := map[string]any{"type": "object", "anyOf": []any{own, standIn}}
	if _, hasID := own["$id"]; !hasID {
		for _, k := range []string{"$defs", "$schema"} {
			if v, ok := own[k]; ok {
				out[k] = v
				delete(own, k)
			}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return schema
	}
	return b
}

// callTool is the handler of project's tool d: a call through the
// runner, asking a person first when the policy says ask.
func (s *server) callTool(project string, d tools.Detail) sdk.ToolHandler {
	name := d.Name
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		// A token the operator bounded (http.tokens max_mode) calls tools
		// in that mode, as the conversations it starts run in it: plan
		// refuses a tool that writes or runs, ask asks the client first.
		call := tools.ToolCall{Name: name, Args: req.Params.Arguments, Mode: s.callerOf(req).MaxMode}
		if len(call.Args) == 0 || string(call.Args) == "null" {
			call.Args = json.RawMessage(`{}`)
		}
		ask, reason, err := s.g.h.NeedsApproval(project, name, call.Mode)
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
		// The request's record rides with the call's outcome: one commit
		// (with the call's start too, for a tool that changes nothing).
		recorded := false
		call.WithOutcome = func(out tools.Result) any {
			recorded = true
			return s.request(req, "tools/call", name, start, callError(out, nil, call, ask, name, reason))
		}
		out, err := s.g.h.CallTool(ctx, project, call)
		err = callError(out, err, call, ask, name, reason)
		if recorded {
			// Committed with the outcome, or not at all: then the runner
			// answered unavailable, and so is the client.
			if err != nil {
				return errorResult(err), nil
			}
			return s.result(project, d, out), nil
		}
		// The call never reached the runner (the project closed since).
		if err := s.record(ctx, req, project, "tools/call", name, start, err); err != nil {
			return errorResult(err), nil
		}
		return s.result(project, d, out), nil
	}
}

// callError is the error a call of tool name is answered with: err (the
// project could not be reached) or the runner's; a call that needed a
// person's approval the client could not be asked for says so.
func callError(out tools.Result, err error, call tools.ToolCall, ask bool, name, reason string) error {
	if err == nil && !out.OK && out.Error != nil {
		err = out.Error
	}
	if err != nil && !call.Approved && ask && errType(err) == tools.ReasonApprovalRequired {
		err = &tools.Error{Type: tools.ReasonApprovalRequired, Message: noElicitation(name, reason)}
	}
	return err
}

// result is a successful call's MCP result: the output as structured
// content (an object, as MCP has it), and as text the member the tool
// names its text (read_file's content) or else the output's JSON. An
// output stored as an artifact is its stand-in as structured content,
// which the listed output schema admits, and a resource_link to the
// whole, with the media type resources/read gives it.
func (s *server) result(project string, d tools.Detail, out tools.Result) *sdk.CallToolResult {
	data := out.Data
	if len(data) == 0 {
		data = json.RawMessage(`null`)
	}
	res := &sdk.CallToolResult{}
	if isObject(data) {
		res.StructuredContent = data
	}
	if len(out.Artifacts) == 0 {
		text := out.Text // the runner's, when the output had one
		if text == "" {
			text = textOf(data, d.TextField)
		}
		res.Content = []sdk.Content{&sdk.TextContent{Text: text}}
		return res
	}
	for _, a := range out.Artifacts {
		s.artifacts.add(project, a.ID, a.MediaType)
		size := a.Size
		uri := artifactURI(project, a.ID)
		res.Content = append(res.Content,
			&sdk.TextContent{Text: fmt.Sprintf("The output of %s is %d bytes, too large to return here: read the whole of it as the resource %s (resources/read). It begins:\n%s", d.Name, a.Size, uri, a.Preview)},
			&sdk.ResourceLink{URI: uri, Name: a.ID, Description: "the whole output of the call", MIMEType: a.MediaType, Size: &size})
	}
	return res
}

// textOf is the output's string member field, or its JSON when there is
// none.
func textOf(data json.RawMessage, field string) string {
	if field != "" {
		var m map[string]json.RawMessage
		var text string
		if json.Unmarshal(data, &m) == nil && json.Unmarshal(m[field], &text) == nil {
			return text
		}
	}
	return string(data)
}

func isObject(data json.RawMessage) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{'
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

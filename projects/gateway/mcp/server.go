package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/gateway"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// server is one MCP server: the tools, prompts and resources of one
// project (project != "") or of every open project (project == ""),
// kept in step with the host by sync. The SDK's feature sets are the
// listing; sync adds what is new or changed and removes what is gone,
// which is also what makes the SDK send list_changed.
type server struct {
	g       *Gateway
	project string
	// caller is who a request is from when it carries no caller of its
	// own (stdio).
	caller gateway.Caller
	mcp    *sdk.Server

	mu        sync.Mutex        // serializes sync
	tools     map[string]string // MCP name → fingerprint
	prompts   map[string]string
	resources map[string]string // URI → fingerprint
	artifacts *issued
}

func (g *Gateway) newServer(project string, caller gateway.Caller) *server {
	s := &server{g: g, project: project, caller: caller, tools: map[string]string{}, prompts: map[string]string{},
		resources: map[string]string{}, artifacts: newIssued(maxIssued)}
	instructions := "The projects of a jido-bus node. Tools, prompts and resources of project P are named P.<name> and jido://P/…."
	if project != "" {
		instructions = "The jido-bus project " + project + ": its tools (run through the project's policy), its commands as prompts, its skills and skill-graph notes as resources."
	}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "jido-bus", Version: g.o.Version}, &sdk.ServerOptions{
		Instructions:      instructions,
		Logger:            g.log,
		CompletionHandler: s.complete,
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{ListChanged: true},
			Prompts:   &sdk.PromptCapabilities{ListChanged: true},
			Resources: &sdk.ResourceCapabilities{ListChanged: true},
		},
	})
	s.mcp.AddReceivingMiddleware(s.middleware)
	for _, t := range s.templates() {
		s.mcp.AddResourceTemplate(t, s.readResource)
	}
	s.sync()
	return s
}

// projectIDs are the projects s shows.
func (s *server) projectIDs() []string {
	if s.project != "" {
		return []string{s.project}
	}
	return s.g.h.ProjectIDs()
}

// qualify is the name of a project's tool or prompt on s.
func (s *server) qualify(project, name string) string {
	if s.project != "" {
		return name
	}
	return project + "." + name
}

// sync brings s's tools, prompts and resources in step with the host.
func (s *server) sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	wantT := map[string]toolDef{}
	wantP := map[string]promptDef{}
	wantR := map[string]resourceDef{}
	for _, p := range s.projectIDs() {
		s.projectTools(p, wantT)
		s.projectPrompts(p, wantP)
		s.projectResources(p, wantR)
	}
	goneT := reconcile(s.tools, wantT, func(d toolDef) string { return d.fingerprint }, func(d toolDef) {
		h := d.handler
		if h == nil {
			h = s.callTool(d.project, d.detail)
		}
		s.mcp.AddTool(d.tool, h)
	})
	goneP := reconcile(s.prompts, wantP, func(d promptDef) string { return d.fingerprint }, func(d promptDef) {
		s.mcp.AddPrompt(d.prompt, s.getPrompt(d.project, d.command))
	})
	goneR := reconcile(s.resources, wantR, func(d resourceDef) string { return d.fingerprint }, func(d resourceDef) {
		s.mcp.AddResource(d.resource, s.readResource)
	})
	if len(goneT) > 0 {
		s.mcp.RemoveTools(goneT...)
	}
	if len(goneP) > 0 {
		s.mcp.RemovePrompts(goneP...)
	}
	if len(goneR) > 0 {
		s.mcp.RemoveResources(goneR...)
	}
}

// reconcile brings have (name → fingerprint of what the SDK serves) in
// step with want: what is new or changed is added (the SDK replaces a
// definition of the same name), and the names no longer wanted are
// returned for removal.
func reconcile[T any](have map[string]string, want map[string]T, fp func(T) string, add func(T)) (gone []string) {
	for n := range have {
		if _, ok := want[n]; !ok {
			gone = append(gone, n)
			delete(have, n)
		}
	}
	for n, d := range want {
		if f := fp(d); have[n] != f {
			add(d)
			have[n] = f
		}
	}
	return gone
}

// fingerprint is v's JSON, to tell a changed definition from the same one.
func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// middleware refreshes the listing before a list (a project opened since
// is then shown), records the lists that name a project, and records a
// call of a tool or prompt that does not exist before the SDK refuses it.
func (s *server) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			start := time.Now()
			s.sync()
			res, err := next(ctx, method, req)
			if s.project != "" {
				if rerr := s.record(ctx, req, s.project, method, "", start, err); rerr != nil {
					return nil, rerr
				}
			}
			return res, err
		case "tools/call":
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
				known := s.known(&s.tools, p.Name)
				s.unknown(ctx, req, method, p.Name, known)
				if err := s.renamed(p.Name, known); err != nil {
					return nil, err
				}
			}
		case "prompts/get":
			if p, ok := req.GetParams().(*sdk.GetPromptParams); ok {
				s.unknown(ctx, req, method, p.Name, s.known(&s.prompts, p.Name))
			}
		}
		return next(ctx, method, req)
	}
}

// renamed refuses a call of an asset tool by its name before the rename
// (command.explain), naming the one to call; the SDK's own answer to an
// unknown tool would not.
func (s *server) renamed(name string, known bool) error {
	if known {
		return nil
	}
	qualifier, tool := "", name
	if s.project == "" { // <project>.<tool> on /mcp
		p, t, ok := strings.Cut(name, ".")
		if !ok {
			return nil
		}
		qualifier, tool = p+".", t
	}
	now, ok := assets.RenamedTool(tool)
	if !ok {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no tool %q: asset tools are named <kind>_<name> now; call %s%s", name, qualifier, now)}
}

func (s *server) known(m *map[string]string, name string) bool {
	s.mu.Lock()
	_, ok := (*m)[name]
	s.mu.Unlock()
	return ok
}

// unknown records a call of a name s does not offer, in the project the
// name belongs to (when it is open): the SDK then answers it with an
// invalid-params error.
func (s *server) unknown(ctx context.Context, req sdk.Request, method, name string, known bool) {
	if known {
		return
	}
	project := s.project
	if project == "" {
		p, _, ok := strings.Cut(name, ".")
		if !ok {
			return
		}
		project = p
	}
	if _, err := s.g.h.ToolDetails(project); err != nil {
		return
	}
	err := &bus.Error{Type: tools.ReasonUnknownTool, Message: "no tool or prompt " + name + " here: list them (tools/list, prompts/list)"}
	// The SDK refuses the call whatever the record's fate.
	_ = s.record(ctx, req, project, method, name, time.Now(), err)
}

// record appends the request's record to project's stream and returns
// the error the request is to be answered with: err, the request's own;
// or, when err is nil and the record could not be committed,
// unavailable. A request that reaches a project is an entry of its
// stream, and no client is told of a success the log does not show. (A
// record that fails beside a failed request is logged.)
func (s *server) record(ctx context.Context, req sdk.Request, project, method, target string, start time.Time, err error) error {
	r := s.request(req, method, target, start, err)
	// The client may be gone (its context cancelled): the record is kept.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	rerr := s.g.h.RecordGatewayRequest(rctx, project, r)
	if rerr == nil {
		return err
	}
	if err != nil {
		s.g.log.Error("record an MCP request in the project's stream", "project", project, "method", method, "target", target, "err", rerr)
		return err
	}
	return bus.Errorf(bus.ReasonUnavailable, "%s was served, but its record in project %s's stream could not be committed (%v)", strings.TrimSpace(method+" "+target), project, rerr)
}

// request is the record of req: who, what, how long since start, and
// err's type and message (or ok).
func (s *server) request(req sdk.Request, method, target string, start time.Time, err error) gateway.Request {
	r := gateway.Request{Gateway: "mcp", Method: method, Target: target, Caller: s.callerOf(req), Result: "ok",
		DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		r.Result, r.Error = errType(err), err.Error()
		if e, ok := errors.AsType[*tools.Error](err); ok {
			r.Error = e.Message
		} else if e, ok := errors.AsType[*bus.Error](err); ok {
			r.Error = e.Message
		}
	}
	return r
}

// callerOf is who sent req: the front door's caller carried in the HTTP
// request's header (Handler sets it), else s's.
func (s *server) callerOf(req sdk.Request) gateway.Caller {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		if v := ex.Header.Get(callerHeader); v != "" {
			var c gateway.Caller
			if json.Unmarshal([]byte(v), &c) == nil && c.Name != "" {
				return c
			}
		}
	}
	return s.caller
}

// errType is err's machine word.
func errType(err error) string {
	if e, ok := errors.AsType[*tools.Error](err); ok {
		return e.Type
	}
	if e, ok := errors.AsType[*bus.Error](err); ok {
		return e.Type
	}
	if errors.Is(err, context.Canceled) {
		return tools.ReasonCancelled
	}
	return bus.ReasonInternal
}

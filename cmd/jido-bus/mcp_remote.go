package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
	"github.com/jido-bus/jido-bus/projects/projectapi"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// toolCallWait bounds how long a tool call over NATS waits for its reply
// when --timeout is shorter. The node's runner bounds the call itself
// (run_command's longest timeout is 10 minutes by default); this only
// keeps a lost reply from holding the MCP call for ever.
const toolCallWait = 11 * time.Minute

// natsHost is the MCP gateway's Host over a running node's project API
// (<prefix>.api.project.<verb>), for jido-bus mcp --nats-url. What the
// API does not carry, it says so rather than pretend:
//
//   - NeedsApproval is always false: no verb takes a person's approval (a
//     NATS client that could approve would bypass the policy), so a tool
//     the policy marks ask is refused by the node's runner with
//     approval_required, and CallTool says where to approve it instead.
//   - Artifact is refused (unavailable): no verb serves the node's
//     artifact store, so a tool result's resource_link is not readable
//     through this server; its text preview is in the result.
//   - CompletePath offers nothing: no verb lists a folder without
//     running list_dir, whose every call is an entry of the project's
//     stream (a completion is asked at every keystroke).
//   - RecordGatewayRequest records nothing: a client may not write a
//     project's stream. The node records every tool call it runs for this
//     server (project.tool.started, then completed or failed, under the
//     NATS user's connection); listing and reading requests leave no entry.
//
// OnAssetsChanged follows the project agent's events on
// <prefix>.emit.<project>.project.{assets.reloaded,started,stopped}.
type natsHost struct {
	nc  *nats.Conn
	r   natsbus.Requester
	log *slog.Logger
}

// ask sends one project API request with the requester's timeout.
func (h natsHost) ask(ctx context.Context, verb string, req, reply any) error {
	return h.r.Call(ctx, projectapi.Area, verb, req, reply)
}

func (h natsHost) ProjectIDs() []string {
	var reply projectapi.ListReply
	if err := h.ask(context.Background(), projectapi.VerbList, struct{}{}, &reply); err != nil {
		h.log.Warn("list the node's projects", "err", err)
		return nil
	}
	var ids []string
	for _, p := range reply.Projects {
		if p.Status == projects.StatusOpen {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

func (h natsHost) ToolDetails(project string) ([]tools.Detail, error) {
	var reply projectapi.ToolsReply
	err := h.ask(context.Background(), projectapi.VerbTools, projectapi.ProjectRequest{Project: project}, &reply)
	return reply.Tools, err
}

func (h natsHost) CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error) {
	if !h.nc.IsConnected() {
		return tools.Result{}, h.unreachable()
	}
	// A call may wait long for its tool, but not for a node that is gone:
	// the wait ends when the connection drops (its reply could never come).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		t := time.NewTicker(connectionCheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !h.nc.IsConnected() {
					cancel()
					return
				}
			}
		}
	}()
	r := h.r
	r.Timeout = max(r.Timeout, toolCallWait)
	var reply projectapi.ToolCallReply
	err := r.Call(ctx, projectapi.Area, projectapi.VerbToolCall,
		projectapi.ToolCallRequest{Project: project, Name: call.Name, Args: call.Args, ID: call.ID}, &reply)
	if err != nil && !h.nc.IsConnected() {
		return tools.Result{}, h.unreachable()
	}
	if be, ok := errors.AsType[*bus.Error](err); ok && be.Type == tools.ReasonApprovalRequired {
		return tools.Result{}, &tools.Error{Type: tools.ReasonApprovalRequired, Message: fmt.Sprintf(
			"%s: the project's policy asks a person before it runs, and jido-bus mcp --nats-url cannot approve a call over NATS: "+
				"approve it in a conversation (jido-bus conv), use the node's own MCP endpoint (serve --http, /mcp/%s), or allow the tool in .jido/policy.yaml (%s)",
			call.Name, project, be.Message)}
	}
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{OK: true, CallID: reply.CallID, Data: reply.Data, Artifacts: reply.Artifacts, Logs: reply.Logs}, nil
}

// connectionCheck is how often a waiting call looks whether the
// connection to the node is still up.
const connectionCheck = 200 * time.Millisecond

// unreachable is the failure of a call made while the node cannot be
// reached; the connection keeps trying, so a later call may succeed.
func (h natsHost) unreachable() error {
	return bus.Errorf(bus.ReasonUnavailable, "the node cannot be reached (it stopped, or the network is down); reconnecting: call again in a moment")
}

// NeedsApproval: the node's project.tool.call applies the policy; a stdio
// caller has no token, so no mode bounds it.
func (h natsHost) NeedsApproval(string, string, string) (bool, string, error) { return false, "", nil }

func (h natsHost) Assets(req projects.AssetsRequest) (projects.AssetsReply, error) {
	var reply projectapi.AssetsReply
	err := h.ask(context.Background(), projectapi.VerbAssets, req, &reply)
	return reply, err
}

func (h natsHost) CompletePath(string, string) ([]string, bool, error) { return nil, false, nil }

func (h natsHost) Artifact(id string) ([]byte, error) {
	return nil, bus.Errorf(bus.ReasonUnavailable,
		"artifact %s: jido-bus mcp --nats-url cannot read the node's artifact store (no NATS API serves it): the tool result's text is its preview; for the whole output use the node's own MCP endpoint (serve --http, /mcp/<project>) or jido-bus mcp on the node's machine", id)
}

func (h natsHost) RecordGatewayRequest(context.Context, string, gateway.Request) error { return nil }

func (h natsHost) OnAssetsChanged(fn func(project string)) (cancel func()) {
	s := h.r.Subjects
	var subs []*nats.Subscription
	for _, t := range []string{projects.TypeAssetsReloaded, projects.TypeStarted, projects.TypeStopped} {
		sub, err := h.nc.Subscribe(s.Emit("*", t), func(m *nats.Msg) {
			if a, err := s.Parse(m.Subject); err == nil {
				fn(a.AgentID)
			}
		})
		if err != nil {
			h.log.Warn("follow the node's project changes: MCP clients will not hear of them", "type", t, "err", err)
			continue
		}
		subs = append(subs, sub)
	}
	return func() {
		for _, sub := range subs {
			_ = sub.Unsubscribe()
		}
	}
}

// runMCPRemote is jido-bus mcp --nats-url: the project at root, found
// open on the running node (by its root) or opened there, served over
// stdio through natsHost.
func runMCPRemote(ctx context.Context, cfg mcpConfig, log *slog.Logger, in io.Reader, out io.Writer) error {
	root, err := filepath.Abs(cfg.project)
	if err != nil {
		return fmt.Errorf("--project %s: %w", cfg.project, err)
	}
	// An MCP server outlives a node restart: reconnect for ever.
	// Reconnect for ever, and never buffer a request while reconnecting:
	// it fails at once (unavailable) instead of waiting out its timeout.
	nc, subjects, err := cfg.conn.connect(nats.MaxReconnects(-1), nats.ReconnectBufSize(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	h := natsHost{nc: nc, r: cfg.conn.requester(nc, subjects), log: log}
	id, err := remoteProject(ctx, h, root, cfg)
	if err != nil {
		return err
	}
	log.Info("serving MCP on stdio", "project", id, "root", root, "node", cfg.conn.url)
	g := mcpgw.New(h, mcpgw.Options{Version: version, Logger: log})
	defer g.Close()
	if err := g.ServeStdio(ctx, id, in, out); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// remoteProject is the id of the project open at root on h's node,
// opening it there when none is. The node knows roots with symlinks
// resolved; root is matched as given and resolved, since the node may be
// on another machine where root does not resolve here.
func remoteProject(ctx context.Context, h natsHost, root string, cfg mcpConfig) (string, error) {
	var ls projectapi.ListReply
	if err := h.ask(ctx, projectapi.VerbList, struct{}{}, &ls); err != nil {
		return "", fmt.Errorf("list the projects of the node at %s: %w", cfg.conn.url, err)
	}
	real := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		real = r
	}
	for _, p := range ls.Projects {
		if p.Root != root && p.Root != real {
			continue
		}
		if cfg.id != "" && cfg.id != p.ID {
			return "", fmt.Errorf("--project %s is already open as %s on the node at %s: drop --id or pass --id %s", cfg.project, p.ID, cfg.conn.url, p.ID)
		}
		return p.ID, nil
	}
	var info projectapi.ProjectInfo
	if err := h.ask(ctx, projectapi.VerbOpen, projectapi.OpenRequest{Root: root, ID: cfg.id}, &info); err != nil {
		hint := ""
		if be, ok := errors.AsType[*bus.Error](err); ok && be.Type == bus.ReasonForbidden {
			hint = " (a client user may not open projects: open it as an operator with 'jido-bus project open', or connect as one)"
		}
		return "", fmt.Errorf("--project %s is not open on the node at %s, and opening it there failed%s: %w", cfg.project, cfg.conn.url, hint, err)
	}
	return info.ID, nil
}

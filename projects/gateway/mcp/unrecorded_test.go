package mcp_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/gateway"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// unrecorded is a Host whose requests cannot be recorded while full is
// set, as when the node's disk is full.
type unrecorded struct {
	mcpgw.Host
	full atomic.Bool
}

// CallTool: a tool call's record rides with its outcome (WithOutcome),
// in the engine's commit; while full, it is one the engine cannot commit,
// so the outcome is not committed either, as on a full disk.
func (h *unrecorded) CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error) {
	if with := call.WithOutcome; with != nil && h.full.Load() {
		call.WithOutcome = func(r tools.Result) any { return uncommittable{with(r)} }
	}
	return h.Host.CallTool(ctx, project, call)
}

type uncommittable struct{ any }

func (h *unrecorded) RecordGatewayRequest(ctx context.Context, project string, r gateway.Request) error {
	if h.full.Load() {
		return bus.Errorf(bus.ReasonUnavailable, "the event log could not write to disk (injected)")
	}
	return h.Host.RecordGatewayRequest(ctx, project, r)
}

// TestUnrecordedRequestFails: a request that reaches a project and would
// succeed, but whose project.gateway.request cannot be committed, is
// answered as a failure saying so — a tool call, a prompt, a resource,
// a list — never as the success the log does not show.
func TestUnrecordedRequestFails(t *testing.T) {
	e := start(t)
	h := &unrecorded{Host: e.n.MCPHost()}
	g := mcpgw.New(h, mcpgw.Options{Version: "test"})
	t.Cleanup(func() { _ = g.Close() })
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	e.srv = srv
	cs := e.connect(t, "/mcp/p1", nil)
	ctx := context.Background()
	h.full.Store(true)

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if typ, msg := errorOf(t, res); typ != bus.ReasonUnavailable || !strings.Contains(msg, "outcome could not be recorded") {
		t.Errorf("tools/call: %s %s, want unavailable saying the record failed", typ, msg)
	}
	saysWhy := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "could not be committed") {
			t.Errorf("%s answered %v, want an error saying its record failed", what, err)
		}
	}
	_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "hello", Arguments: map[string]string{"arguments": "you", "place": "Mars"}})
	saysWhy("prompts/get", err)
	_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "jido://p1/skills/review"})
	saysWhy("resources/read", err)
	_, err = cs.ListTools(ctx, nil)
	saysWhy("tools/list", err)

	// A refused call's record is in the commit of its refusal: when that
	// cannot be made, the answer is unavailable and still names the
	// refusal.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../x"}})
	if err != nil {
		t.Fatal(err)
	}
	if typ, msg := errorOf(t, res); typ != bus.ReasonUnavailable || !strings.Contains(msg, "outside_root") {
		t.Errorf("a refused call whose record failed answered %s: %s; want unavailable naming outside_root", typ, msg)
	}
	h.full.Store(false)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("once records commit again: %v", err)
	}
}

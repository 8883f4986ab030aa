package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListAndCallOverHTTP(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	cs := e.connect(t, "/mcp/p1", nil)

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, tl := range lt.Tools {
		byName[tl.Name] = tl
	}
	rf, ok := byName["read_file"]
	if !ok {
		t.Fatalf("no read_file in %v", names(lt.Tools))
	}
	if rf.InputSchema == nil || rf.OutputSchema == nil {
		t.Errorf("read_file lists no input or output schema: %+v", rf)
	}
	if a := rf.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || !a.IdempotentHint {
		t.Errorf("read_file annotations %+v: want read-only, not destructive, idempotent", rf.Annotations)
	}
	if a := byName["write_file"].Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("write_file annotations %+v: want destructive", a)
	}
	for _, want := range []string{"command_hello", "skill_review"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("no %s in %v", want, names(lt.Tools))
		}
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("read_file: %+v", res.Content[0])
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(sc), "package main") {
		t.Errorf("structuredContent %s: want the file", sc)
	}
	if txt := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, "package main") {
		t.Errorf("text block %q: want the JSON output", txt)
	}
	r := findRecord(t, e.n, "p1", "tools/call", "read_file")
	if r.Result != "ok" || r.Gateway != "mcp" || r.Caller.Name != "unknown" {
		t.Errorf("record %+v: want ok by mcp from unknown (no front door)", r)
	}
	findRecord(t, e.n, "p1", "tools/list", "")
}

func names(ts []*sdk.Tool) []string {
	var ns []string
	for _, t := range ts {
		ns = append(ns, t.Name)
	}
	return ns
}

// TestBadToolCalls: a path escape, args failing the schema and an unknown
// tool are each answered (isError or a protocol error), recorded, and the
// session goes on.
func TestBadToolCalls(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	cs := e.connect(t, "/mcp/p1", nil)

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../../etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := errorOf(t, res); typ != "outside_root" {
		t.Errorf("path escape: type %s, want outside_root", typ)
	}
	if r := findRecord(t, e.n, "p1", "tools/call", "read_file"); r.Result != "outside_root" || r.Error == "" {
		t.Errorf("record %+v: want outside_root with its message", r)
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": 7}})
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := errorOf(t, res); typ != "invalid_args" {
		t.Errorf("bad args: type %s, want invalid_args", typ)
	}

	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("unknown tool: %v, want a protocol error naming it", err)
	}
	if r := findRecord(t, e.n, "p1", "tools/call", "no_such_tool"); r.Result != "unknown_tool" {
		t.Errorf("record %+v: want unknown_tool", r)
	}

	// Still up.
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "main.go"}}); err != nil || res.IsError {
		t.Fatalf("after bad calls: %+v %v", res, err)
	}
}

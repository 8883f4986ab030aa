package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestApprovedCallRunsAnAskTool: a tool whose mode is ask is refused
// approval_required, and runs — with its file writes authorized — only
// when the call says a person approved it; approving changes nothing for
// a denied path or another ask tool.
func TestApprovedCallRunsAnAskTool(t *testing.T) {
	p := policy.Default()
	p.Tools = map[string]policy.Mode{"*": policy.ModeAllow, "write_file": policy.ModeAsk, "edit_file": policy.ModeAsk}
	f := newFixture(t, map[string]string{"a.txt": "x"}, p, Options{})
	ctx := context.Background()
	args := json.RawMessage(`{"path":"b.txt","content":"hi"}`)
	if _, err := f.runner.Run(ctx, ToolCall{Name: "write_file", Args: args}); errType(err) != ReasonApprovalRequired {
		t.Fatalf("write_file without approval: %v, want approval_required", err)
	}
	if _, err := f.runner.Run(ctx, ToolCall{Name: "write_file", Args: args, Approved: true}); err != nil {
		t.Fatalf("write_file approved: %v", err)
	}
	denied := json.RawMessage(`{"path":".git/hooks/pre-commit","content":"evil"}`)
	if _, err := f.runner.Run(ctx, ToolCall{Name: "write_file", Args: denied, Approved: true}); errType(err) == "" || errType(err) == ReasonApprovalRequired {
		t.Fatalf("approved write into .git: %v, want refused by the path rules", err)
	}
	edit := json.RawMessage(`{"path":"a.txt","old_string":"x","new_string":"y"}`)
	if _, err := f.runner.Run(ctx, ToolCall{Name: "edit_file", Args: edit}); errType(err) != ReasonApprovalRequired {
		t.Fatalf("edit_file after write_file was approved: %v, want approval_required still", err)
	}
	// Approved is never read from a request.
	var tc ToolCall
	if err := json.Unmarshal([]byte(`{"name":"write_file","Approved":true,"approved":true}`), &tc); err != nil || tc.Approved {
		t.Fatalf("ToolCall decoded from JSON: %+v %v, want Approved false", tc, err)
	}
}

func errType(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Type
	}
	if err != nil {
		return "other:" + err.Error()
	}
	return ""
}

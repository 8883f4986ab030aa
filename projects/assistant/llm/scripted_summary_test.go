package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func scriptOf(t *testing.T, lines ...string) Provider {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := newScripted(Config{Script: path})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScriptedSummaryLines: a compaction's request is answered by the
// summary lines, in order, without shifting the turns; a script without
// any still answers it.
func TestScriptedSummaryLines(t *testing.T) {
	p := scriptOf(t, `{"text":"turn 1"}`, `{"text":"the summary","summary":true}`, `{"text":"turn 2"}`)
	ctx := context.Background()
	user := []Message{{Role: RoleUser, Content: "task"}}
	if r, err := p.Complete(ctx, Request{Messages: user}, nil); err != nil || r.Text != "turn 1" {
		t.Fatalf("turn 1: %q %v", r.Text, err)
	}
	if r, err := p.Complete(ctx, Request{Messages: user, Summary: true}, nil); err != nil || r.Text != "the summary" {
		t.Fatalf("summary: %q %v", r.Text, err)
	}
	two := append(user, Message{Role: RoleAssistant, Content: "turn 1"}, Message{Role: RoleUser, Content: "more"})
	if r, err := p.Complete(ctx, Request{Messages: two}, nil); err != nil || r.Text != "turn 2" {
		t.Fatalf("turn 2: %q %v", r.Text, err)
	}
	// A compacted context: the summary counts as the answers it replaces.
	compacted := []Message{{Role: RoleUser, Content: "task"}, {Role: RoleUser, Content: "[Summary of the earlier conversation, written when it was compacted; it replaces 3 messages, 1 of them the assistant's]\nread it"}, {Role: RoleUser, Content: "more"}}
	if r, err := p.Complete(ctx, Request{Messages: compacted}, nil); err != nil || r.Text != "turn 2" {
		t.Fatalf("after a compaction: %q %v, want turn 2", r.Text, err)
	}
	q := scriptOf(t, `{"text":"only"}`)
	if r, err := q.Complete(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "transcript"}}, Summary: true}, nil); err != nil || !strings.Contains(r.Text, "transcript") {
		t.Fatalf("built-in summary: %q %v", r.Text, err)
	}
	if _, err := newScriptedLines(t, `{"summary":true,"text":"x","tool_calls":[{"name":"a"}]}`); err == nil {
		t.Fatal("a summary line with tool calls was accepted")
	}
}

func newScriptedLines(t *testing.T, lines ...string) (Provider, error) {
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return newScripted(Config{Script: path})
}

// TestScriptedExpect: a line's expect fails a request that does not hold
// the text, bad_request, and answers one that does.
func TestScriptedExpect(t *testing.T) {
	p := scriptOf(t, `{"text":"ok","expect":"the task"}`)
	_, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "something else"}}}, nil)
	if e, ok := err.(*Error); !ok || e.Kind != KindBadRequest || !strings.Contains(e.Message, "the task") {
		t.Fatalf("want bad_request naming the text, got %v", err)
	}
	if r, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "do the task"}}}, nil); err != nil || r.Text != "ok" {
		t.Fatalf("%q %v", r.Text, err)
	}
}

// TestEndpointWindows: a window is the operator's, per model, and at
// least MinWindow tokens.
func TestEndpointWindows(t *testing.T) {
	e := Endpoint{Name: "x", Kind: ProviderOpenAI, Windows: map[string]int64{"m": 8000}}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	if w, ok := e.Window("m"); !ok || w != 8000 {
		t.Fatalf("window of m: %d %v", w, ok)
	}
	if _, ok := e.Window("other"); ok {
		t.Fatal("a model without a window has one")
	}
	e.Windows["m"] = 10
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Fatalf("a window of 10 tokens: %v", err)
	}
}

package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptedForPlaysEachConversation: lines with "for" are the script
// of a conversation whose first user message holds that text (a
// delegated child's task), counted apart from the other lines, so one
// file plays a parent and its child; a file whose every line has "for"
// refuses a conversation matching none.
func TestScriptedForPlaysEachConversation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(`{"text":"parent 1"}
{"for":"count lines","text":"child 1"}
{"text":"parent 2"}
{"for":"count lines","text":"child 2"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newScriptedForTest(t, path)
	ctx := context.Background()
	ask := func(first string, answered int) string {
		t.Helper()
		req := Request{Messages: []Message{{Role: RoleUser, Content: first}}}
		for range answered {
			req.Messages = append(req.Messages, Message{Role: RoleAssistant, Content: "x"}, Message{Role: RoleUser, Content: "more"})
		}
		resp, err := p.Complete(ctx, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Text
	}
	for _, c := range []struct {
		first    string
		answered int
		want     string
	}{{"go", 0, "parent 1"}, {"please count lines of a.txt", 0, "child 1"}, {"go", 1, "parent 2"}, {"please count lines of a.txt", 1, "child 2"}} {
		if got := ask(c.first, c.answered); got != c.want {
			t.Fatalf("%q after %d answers: %q, want %q", c.first, c.answered, got, c.want)
		}
	}

	only := filepath.Join(t.TempDir(), "only.jsonl")
	if err := os.WriteFile(only, []byte(`{"for":"count lines","text":"child"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := newScriptedForTest(t, only).Complete(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "hello"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"for"`) {
		t.Fatalf("a conversation no line is for: %v, want a config error naming \"for\"", err)
	}
}

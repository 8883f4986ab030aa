package llm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newScriptedForTest(t *testing.T, path string) Provider {
	t.Helper()
	p, err := New(Config{Provider: "scripted", Script: path}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatalf("New scripted: %v", err)
	}
	return p
}

// history builds a request holding n assistant messages (n answered turns).
func history(n int) Request {
	req := Request{Messages: []Message{{Role: RoleUser, Content: "read a.txt"}}}
	for i := 0; i < n; i++ {
		req.Messages = append(req.Messages, Message{Role: RoleAssistant, Content: "x"}, Message{Role: RoleTool, ToolCallID: "c", Content: "r"})
	}
	return req
}

func TestScriptedTurns(t *testing.T) {
	p := newScriptedForTest(t, "testdata/script.jsonl")
	ctx := context.Background()

	var deltas []Delta
	resp, err := p.Complete(ctx, history(0), func(d Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Let me read the file." || resp.Usage != (Usage{InputTokens: 11, OutputTokens: 7}) || resp.StopReason != "tool_calls" {
		t.Fatalf("turn 0: %+v", resp)
	}
	want := []ToolCall{{ID: "call_0_0", Name: "read_file", Args: `{"path":"a.txt"}`}, {ID: "mine", Name: "grep", Args: `{"pattern": oops`}}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != want[0] || resp.ToolCalls[1] != want[1] {
		t.Fatalf("tool calls: %+v, want %+v", resp.ToolCalls, want)
	}
	var text strings.Builder
	pieces := 0
	for _, d := range deltas {
		if d.IsText() {
			text.WriteString(d.Text)
			pieces++
			if len(d.Text) > 4 {
				t.Errorf("piece %q longer than chunk 4", d.Text)
			}
		}
	}
	if text.String() != resp.Text || pieces < 2 {
		t.Errorf("streamed %q in %d pieces, want the text in pieces", text.String(), pieces)
	}

	// The same request again (a replay) gets the same answer.
	again, err := p.Complete(ctx, history(0), nil)
	if err != nil || again.Text != resp.Text {
		t.Fatalf("replay of turn 0: %+v %v", again, err)
	}

	// Turn 1: two failures, each retry of the same request gets the next line.
	_, err = p.Complete(ctx, history(1), nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindRateLimited || e.Status != 429 || e.RetryAfter != 1500*time.Millisecond || e.Message != "slow down" {
		t.Fatalf("first attempt of turn 1: %#v", err)
	}
	_, err = p.Complete(ctx, history(1), nil)
	if !errors.As(err, &e) || e.Kind != KindServer || !e.Retryable() || !strings.Contains(e.Message, "server") {
		t.Fatalf("second attempt of turn 1: %#v", err)
	}
	resp, err = p.Complete(ctx, history(1), nil)
	if err != nil || resp.Text != "Done: the file says hi." || resp.StopReason != "stop" || len(resp.ToolCalls) != 0 {
		t.Fatalf("third attempt of turn 1: %+v %v", resp, err)
	}

	// Turn 2 (after the blank line): an empty answer is a valid answer.
	resp, err = p.Complete(ctx, history(2), nil)
	if err != nil || resp.Text != "" || len(resp.ToolCalls) != 0 {
		t.Fatalf("turn 2: %+v %v", resp, err)
	}

	// Past the end.
	_, err = p.Complete(ctx, history(3), nil)
	if !errors.As(err, &e) || e.Kind != KindConfig || !strings.Contains(e.Message, "no more turns") || !strings.Contains(e.Message, "script.jsonl") {
		t.Fatalf("past the end: %#v", err)
	}
}

func TestScriptedFailureCountIsPerRequest(t *testing.T) {
	// Two conversations at the same turn do not consume each other's failures.
	p := newScriptedForTest(t, "testdata/script.jsonl")
	a, b := history(1), history(1)
	b.Messages[0].Content = "another conversation"
	for _, req := range []Request{a, b} {
		_, err := p.Complete(context.Background(), req, nil)
		if Classify(err).Kind != KindRateLimited {
			t.Fatalf("first attempt should be the 429 line, got %v", err)
		}
	}
}

func TestScriptedDelayHonoursCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slow.jsonl")
	if err := os.WriteFile(path, []byte(`{"text":"slow answer","chunk":1,"delay_ms":60000}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := newScriptedForTest(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Delta, 100)
	errc := make(chan error, 1)
	go func() {
		_, err := p.Complete(ctx, history(0), func(d Delta) { got <- d })
		errc <- err
	}()
	cancel()
	err := <-errc
	if Classify(err).Kind != KindCancelled {
		t.Fatalf("want cancelled, got %v", err)
	}
}

func TestScriptedBadScripts(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"notjson":     "{\"text\": \"a\"}\nnot json\n",
		"unknown":     `{"txt":"typo"}` + "\n",
		"badkind":     `{"fail":{"kind":"boom"}}` + "\n",
		"twoargs":     `{"tool_calls":[{"name":"x","args":{},"args_text":"{}"}]}` + "\n",
		"noname":      `{"tool_calls":[{"args":{}}]}` + "\n",
		"negchunk":    `{"text":"a","chunk":-1}` + "\n",
		"emptyscript": "\n\n",
	}
	for name, body := range cases {
		path := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := New(Config{Provider: "scripted", Script: path}, func(string) string { return "" }, nil)
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindConfig || !strings.Contains(e.Message, path) {
			t.Errorf("%s: want a config error naming %s, got %v", name, path, err)
		}
	}
	_, err := New(Config{Provider: "scripted", Script: filepath.Join(dir, "missing.jsonl")}, func(string) string { return "" }, nil)
	if Classify(err).Kind != KindConfig {
		t.Errorf("missing script: %v", err)
	}
	_, err = New(Config{Provider: "scripted"}, func(string) string { return "" }, nil)
	if e := Classify(err); e.Kind != KindConfig || !strings.Contains(e.Message, "script") {
		t.Errorf("no script path: %v", err)
	}
}

// A script names a file of the project, never one outside it.
func TestScriptIsReadInsideItsFolder(t *testing.T) {
	base := t.TempDir()
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "outside.jsonl"), []byte(`{"text":"outside"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(proj)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, script := range []string{"../outside.jsonl", filepath.Join(base, "outside.jsonl"), "/proc/self/environ"} {
		_, err := New(Config{Provider: ProviderScripted, Script: script, Files: root.FS()}, env(nil), nil)
		if e := Classify(err); e == nil || e.Kind != KindConfig {
			t.Errorf("script %s: %v, want a config error", script, err)
		}
	}
}

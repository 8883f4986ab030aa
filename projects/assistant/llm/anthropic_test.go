package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func anthropicFor(t *testing.T, fs *fakeServer, cfg Config) Provider {
	t.Helper()
	cfg.Provider = "anthropic"
	if cfg.Model == "" {
		cfg.Model = "claude-sonnet-4-5"
	}
	cfg.BaseURL = fs.URL
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = DefaultAnthropicKeyEnv // as the built-in endpoint names it
	}
	p, err := New(cfg, env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "TEAM_KEY": "team-key"}), fs.Client())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnthropicStreamsText(t *testing.T) {
	fs := newFakeServer(t, reply{file: "anthropic_text.sse"})
	temp := 0.3
	p := anthropicFor(t, fs, Config{Temperature: &temp})
	var c collect
	resp, err := p.Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The file says hello, world." || c.text.String() != resp.Text || c.texts != 4 {
		t.Fatalf("text %q, streamed %q in %d pieces", resp.Text, c.text.String(), c.texts)
	}
	if resp.Usage != (Usage{InputTokens: 31, OutputTokens: 12}) || resp.StopReason != "end_turn" || resp.Model != "claude-sonnet-4-5-20250929" {
		t.Fatalf("response %+v", resp)
	}
	req, body := fs.last()
	// This SDK version sends the key as a bearer token; older ones used x-api-key.
	if req.URL.Path != "/v1/messages" || (req.Header.Get("X-Api-Key") != "sk-ant-test" && req.Header.Get("Authorization") != "Bearer sk-ant-test") {
		t.Fatalf("request to %s with key %q (headers %v)", req.URL.Path, req.Header.Get("X-Api-Key"), req.Header)
	}
	var sent struct {
		Model       string  `json:"model"`
		MaxTokens   int     `json:"max_tokens"`
		Stream      bool    `json:"stream"`
		Temperature float64 `json:"temperature"`
		System      []struct{ Text string }
		Messages    []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if sent.Model != "claude-sonnet-4-5" || sent.MaxTokens != DefaultAnthropicMaxTokens || !sent.Stream || sent.Temperature != 0.3 ||
		len(sent.System) != 1 || sent.System[0].Text != "You are terse." {
		t.Fatalf("body %s", body)
	}
	// user, assistant (two tool_use), ONE user with both tool_result blocks.
	if len(sent.Messages) != 3 || sent.Messages[2].Role != "user" || len(sent.Messages[2].Content) != 2 ||
		sent.Messages[2].Content[0].Type != "tool_result" || sent.Messages[2].Content[1].ToolUseID != "call_2" ||
		sent.Messages[1].Role != "assistant" || len(sent.Messages[1].Content) != 2 || sent.Messages[1].Content[0].Type != "tool_use" ||
		string(sent.Messages[1].Content[0].Input) != `{"path":"a.txt"}` {
		t.Fatalf("messages sent: %s", body)
	}
	if len(sent.Tools) != 1 || sent.Tools[0].Name != "read_file" || sent.Tools[0].InputSchema["type"] != "object" || sent.Tools[0].InputSchema["required"] == nil {
		t.Fatalf("tools sent: %s", body)
	}
}

func TestAnthropicToolUseSplitAcrossChunks(t *testing.T) {
	fs := newFakeServer(t, reply{file: "anthropic_tools.sse"})
	var c collect
	resp, err := anthropicFor(t, fs, Config{}).Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read_file", Args: `{"path": "src/a.go"}`},
		{ID: "toolu_01Vx9HkPq2ZbQm3uE4rJ5sTk", Name: "grep", Args: `{"pattern":"TODO", "path": "."}`},
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != want[0] || resp.ToolCalls[1] != want[1] {
		t.Fatalf("tool calls %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.Text != "Reading both." || resp.StopReason != "tool_use" || resp.Usage != (Usage{InputTokens: 472, OutputTokens: 89}) {
		t.Fatalf("response %+v", resp)
	}
	for i, w := range want {
		if c.args[i] != w.Args || c.ids[i] != w.ID || c.names[i] != w.Name {
			t.Errorf("deltas of call %d: id %q name %q args %q", i, c.ids[i], c.names[i], c.args[i])
		}
	}
}

func TestAnthropicEmptyAnswerIsValid(t *testing.T) {
	fs := newFakeServer(t, reply{file: "anthropic_empty_answer.sse"})
	resp, err := anthropicFor(t, fs, Config{}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil || resp.Text != "" || len(resp.ToolCalls) != 0 || resp.Usage.InputTokens != 9 {
		t.Fatalf("empty answer: %+v %v", resp, err)
	}
}

func TestAnthropicFailures(t *testing.T) {
	cases := []struct {
		name   string
		reply  reply
		keyEnv string
		kind   string
		status int
		retry  time.Duration
		says   []string
	}{
		{"401", reply{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011"}`},
			"", KindAuth, 401, 0, []string{"ANTHROPIC_API_KEY is rejected (401)", "invalid x-api-key"}},
		{"403 named key", reply{status: 403, body: `{"type":"error","error":{"type":"permission_error","message":"no access"}}`},
			"TEAM_KEY", KindAuth, 403, 0, []string{"TEAM_KEY is rejected (403)"}},
		{"429", reply{status: 429, header: map[string]string{"Retry-After": "12"}, body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			"", KindRateLimited, 429, 12 * time.Second, []string{"rate limit"}},
		{"529 overloaded", reply{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			"", KindServer, 529, 0, []string{"Overloaded"}},
		{"400", reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`},
			"", KindBadRequest, 400, 0, []string{"roles must alternate"}},
		{"error event mid-stream", reply{file: "anthropic_overloaded.sse"}, "", KindServer, 0, 0, []string{"overloaded_error"}},
		{"cut mid-stream", reply{file: "anthropic_tools.sse", upTo: 6, cut: true}, "", KindStream, 0, 0, nil},
		{"ends before message_stop", reply{file: "anthropic_tools.sse", upTo: 6}, "", KindStream, 0, 0, []string{"message_stop"}},
		{"malformed chunk", reply{file: "anthropic_malformed.sse"}, "", KindStream, 0, 0, nil},
		{"empty stream", reply{}, "", KindStream, 0, 0, []string{"empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := newFakeServer(t, c.reply)
			_, err := anthropicFor(t, fs, Config{APIKeyEnv: c.keyEnv}).Complete(context.Background(), sampleRequest(), nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want *Error, got %T %v", err, err)
			}
			if e.Kind != c.kind || e.Status != c.status || e.RetryAfter != c.retry {
				t.Fatalf("got kind %s status %d retry %v (%s), want %s %d %v", e.Kind, e.Status, e.RetryAfter, e.Message, c.kind, c.status, c.retry)
			}
			for _, s := range c.says {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q does not say %q", e.Message, s)
				}
			}
			if strings.Contains(e.Message, "sk-ant-test") || strings.Contains(e.Message, "team-key") {
				t.Errorf("message %q leaks the key", e.Message)
			}
			if n := fs.count(); n != 1 {
				t.Errorf("the server saw %d requests: the provider must make exactly one attempt", n)
			}
		})
	}
}

func TestAnthropicCancelMidStream(t *testing.T) {
	fs := newFakeServer(t, reply{file: "anthropic_text.sse", upTo: 4, block: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := anthropicFor(t, fs, Config{}).Complete(ctx, sampleRequest(), func(d Delta) {
		if d.Text != "" {
			cancel()
		}
	})
	if e := Classify(err); e == nil || e.Kind != KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancelled, got %v", err)
	}
}

func TestAnthropicInvalidArgsKeptRaw(t *testing.T) {
	// A tool_use whose streamed input is not JSON: the caller must see the
	// text the model wrote, not the SDK's {} placeholder.
	fs := newFakeServer(t, reply{file: "anthropic_bad_args.sse"})
	resp, err := anthropicFor(t, fs, Config{}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Args != `{"path": src/a.go` {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
}

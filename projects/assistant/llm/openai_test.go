package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func openAIFor(t *testing.T, fs *fakeServer, cfg Config) Provider {
	t.Helper()
	cfg.Provider = "openai"
	if cfg.Model == "" {
		cfg.Model = "gpt-4o-mini"
	}
	cfg.BaseURL = fs.URL + "/v1"
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = DefaultOpenAIKeyEnv // as the built-in endpoint names it
	}
	p, err := New(cfg, env(map[string]string{"OPENAI_API_KEY": "sk-test-openai", "MY_GATEWAY_KEY": "gw-key"}), fs.Client())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sampleRequest() Request {
	return Request{
		System: "You are terse.",
		Messages: []Message{
			{Role: RoleUser, Content: "What does a.txt say?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "read_file", Args: `{"path":"a.txt"}`}, {ID: "call_2", Name: "grep", Args: `{"pattern":"x"}`}}},
			{Role: RoleTool, ToolCallID: "call_1", Content: "hello"},
			{Role: RoleTool, ToolCallID: "call_2", Content: "no match"},
		},
		Tools: []Tool{{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
	}
}

func TestOpenAIStreamsText(t *testing.T) {
	fs := newFakeServer(t, reply{file: "openai_text.sse"})
	temp := 0.2
	p := openAIFor(t, fs, Config{Temperature: &temp, MaxTokens: 300})
	var c collect
	resp, err := p.Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The file says hello, world." || c.text.String() != resp.Text || c.texts != 6 {
		t.Fatalf("text %q, streamed %q in %d pieces", resp.Text, c.text.String(), c.texts)
	}
	if resp.Usage != (Usage{InputTokens: 25, OutputTokens: 7}) || resp.StopReason != "stop" || resp.Model != "gpt-4o-mini-2024-07-18" || len(resp.ToolCalls) != 0 {
		t.Fatalf("response %+v", resp)
	}
	req, body := fs.last()
	if req.URL.Path != "/v1/chat/completions" || req.Header.Get("Authorization") != "Bearer sk-test-openai" {
		t.Fatalf("request to %s with auth %q", req.URL.Path, req.Header.Get("Authorization"))
	}
	var sent struct {
		Model         string  `json:"model"`
		Stream        bool    `json:"stream"`
		Temperature   float64 `json:"temperature"`
		MaxTokens     int     `json:"max_tokens"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil {
		t.Fatalf("request body %s: %v", body, err)
	}
	if sent.Model != "gpt-4o-mini" || !sent.Stream || !sent.StreamOptions.IncludeUsage || sent.Temperature != 0.2 || sent.MaxTokens != 300 {
		t.Fatalf("request body %s", body)
	}
	roles := []string{}
	for _, m := range sent.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool" || sent.Messages[3].ToolCallID != "call_1" ||
		len(sent.Messages[2].ToolCalls) != 2 || sent.Messages[2].ToolCalls[1].Function.Arguments != `{"pattern":"x"}` {
		t.Fatalf("messages sent: %s", body)
	}
	if len(sent.Tools) != 1 || sent.Tools[0].Type != "function" || sent.Tools[0].Function.Name != "read_file" || sent.Tools[0].Function.Parameters["required"] == nil {
		t.Fatalf("tools sent: %s", body)
	}
}

func TestOpenAIToolCallsSplitAcrossChunks(t *testing.T) {
	fs := newFakeServer(t, reply{file: "openai_tools.sse"})
	p := openAIFor(t, fs, Config{})
	var c collect
	resp, err := p.Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "call_Rd8aQ1", Name: "read_file", Args: `{"path": "src/a.go"}`},
		{ID: "call_Gr7bZ2", Name: "grep", Args: `{"pattern":"TODO", "path": "."}`},
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != want[0] || resp.ToolCalls[1] != want[1] {
		t.Fatalf("tool calls %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.Text != "Reading both." || resp.StopReason != "tool_calls" || resp.Usage != (Usage{InputTokens: 120, OutputTokens: 48}) {
		t.Fatalf("response %+v", resp)
	}
	for i, w := range want {
		if c.args[i] != w.Args || c.ids[i] != w.ID || c.names[i] != w.Name {
			t.Errorf("deltas of call %d: id %q name %q args %q", i, c.ids[i], c.names[i], c.args[i])
		}
	}
}

func TestOpenAIEmptyAnswerIsValid(t *testing.T) {
	fs := newFakeServer(t, reply{file: "openai_empty_answer.sse"})
	resp, err := openAIFor(t, fs, Config{}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil || resp.Text != "" || len(resp.ToolCalls) != 0 || resp.Usage.InputTokens != 9 {
		t.Fatalf("empty answer: %+v %v", resp, err)
	}
}

func TestOpenAIFailures(t *testing.T) {
	cases := []struct {
		name   string
		reply  reply
		keyEnv string
		kind   string
		status int
		retry  time.Duration
		says   []string
	}{
		{"401 default key", reply{status: 401, body: `{"error":{"message":"Incorrect API key provided: sk-test***enai.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
			"", KindAuth, 401, 0, []string{"OPENAI_API_KEY is rejected (401)", "Incorrect API key"}},
		{"401 named key", reply{status: 401, body: `{"error":{"message":"bad key","type":"invalid_request_error"}}`},
			"MY_GATEWAY_KEY", KindAuth, 401, 0, []string{"MY_GATEWAY_KEY is rejected (401)"}},
		{"429 retry-after", reply{status: 429, header: map[string]string{"Retry-After": "3"}, body: `{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}`},
			"", KindRateLimited, 429, 3 * time.Second, []string{"Rate limit reached"}},
		{"500", reply{status: 500, body: `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`},
			"", KindServer, 500, 0, []string{"500"}},
		{"400", reply{status: 400, body: `{"error":{"message":"Invalid schema for function 'read_file'","type":"invalid_request_error"}}`},
			"", KindBadRequest, 400, 0, []string{"Invalid schema"}},
		{"cut mid-stream", reply{file: "openai_text.sse", upTo: 3, cut: true}, "", KindStream, 0, 0, nil},
		{"ends before finish", reply{file: "openai_text.sse", upTo: 3}, "", KindStream, 0, 0, []string{"finish"}},
		{"malformed chunk", reply{file: "openai_malformed.sse"}, "", KindStream, 0, 0, nil},
		{"empty stream", reply{file: ""}, "", KindStream, 0, 0, []string{"empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := newFakeServer(t, c.reply)
			p := openAIFor(t, fs, Config{APIKeyEnv: c.keyEnv})
			_, err := p.Complete(context.Background(), sampleRequest(), nil)
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
			if strings.Contains(e.Message, "sk-test-openai") || strings.Contains(e.Message, "gw-key") {
				t.Errorf("message %q leaks the key", e.Message)
			}
			if n := fs.count(); n != 1 {
				t.Errorf("the server saw %d requests: the provider must make exactly one attempt", n)
			}
		})
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	fs := newFakeServer(t, reply{file: "openai_text.sse", upTo: 3, block: true})
	p := openAIFor(t, fs, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := p.Complete(ctx, sampleRequest(), func(d Delta) {
		if d.Text != "" {
			cancel() // the user pressed Ctrl-C while the answer streams
		}
	})
	if e := Classify(err); e == nil || e.Kind != KindCancelled || e.Retryable() {
		t.Fatalf("want cancelled, got %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%v should match context.Canceled", err)
	}
}

func TestOpenAIAttemptTimeout(t *testing.T) {
	fs := newFakeServer(t, reply{file: "openai_text.sse", upTo: 2, block: true})
	p := openAIFor(t, fs, Config{Timeout: 50 * time.Millisecond})
	_, err := p.Complete(context.Background(), sampleRequest(), nil)
	if e := Classify(err); e == nil || e.Kind != KindTimeout || !e.Retryable() || !strings.Contains(e.Message, "timeout_ms") {
		t.Fatalf("want timeout naming timeout_ms, got %v", err)
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	fs := newFakeServer(t, reply{})
	p := openAIFor(t, fs, Config{})
	fs.Close()
	_, err := p.Complete(context.Background(), sampleRequest(), nil)
	if e := Classify(err); e == nil || e.Kind != KindServer || !e.Retryable() {
		t.Fatalf("want a retryable server error for an unreachable endpoint, got %#v", err)
	}
}

func TestOpenAIBadRequestInput(t *testing.T) {
	fs := newFakeServer(t, reply{file: "openai_text.sse"})
	p := openAIFor(t, fs, Config{})
	for name, req := range map[string]Request{
		"bad role":   {Messages: []Message{{Role: "robot", Content: "x"}}},
		"bad schema": {Messages: []Message{{Role: RoleUser, Content: "x"}}, Tools: []Tool{{Name: "t", InputSchema: json.RawMessage(`[1,2]`)}}},
	} {
		_, err := p.Complete(context.Background(), req, nil)
		if e := Classify(err); e.Kind != KindBadRequest {
			t.Errorf("%s: want bad_request, got %v", name, err)
		}
	}
	if fs.count() != 0 {
		t.Errorf("a request refused locally must not reach the server")
	}
	_ = http.StatusOK
}

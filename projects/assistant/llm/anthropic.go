package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicProvider speaks the Anthropic Messages API, streaming, with tool
// use. The key lives only in svc's options.
type anthropicProvider struct {
	description
	cfg    Config
	keyEnv string
	svc    anthropic.MessageService
}

func newAnthropic(cfg Config, key string, hc *http.Client) Provider {
	opts := []option.RequestOption{
		// Only what is passed here: no ANTHROPIC_* variable or profile file
		// from the process environment.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // one attempt per Complete: the caller retries
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	client := anthropic.NewClient(opts...)
	return &anthropicProvider{description: describe(cfg, cfg.APIKeyEnv), cfg: cfg, keyEnv: cfg.APIKeyEnv, svc: client.Messages}
}

func (p *anthropicProvider) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	actx, cancel := attemptContext(ctx, p.cfg.Timeout)
	defer cancel()

	var opts []option.RequestOption
	// This SDK version's params have no temperature member; the API still
	// takes one.
	if t := firstTemperature(req.Temperature, p.cfg.Temperature); t != nil {
		opts = append(opts, option.WithJSONSet("temperature", *t))
	}
	stream := p.svc.NewStreaming(actx, params, opts...)
	defer stream.Close()
	var (
		msg     anthropic.Message
		events  int
		stopped bool
		// The SDK's accumulator replaces arguments that are not valid JSON
		// by {}; the caller must see what the model wrote, so keep the raw
		// text per tool call, keyed by content block index.
		toolOf = map[int64]int{}
		args   []string
	)
	for stream.Next() {
		ev := stream.Current()
		events++
		if err := msg.Accumulate(ev); err != nil {
			return Response{}, &Error{Kind: KindStream, Message: fmt.Sprintf("the model server sent event %d (%s) that does not continue the message: %v", events, ev.Type, err), cause: err}
		}
		switch ev.Type {
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				i := len(args)
				toolOf[ev.Index] = i
				args = append(args, "")
				onDelta(Delta{ToolCallIndex: i, ToolCallID: ev.ContentBlock.ID, ToolName: ev.ContentBlock.Name})
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					onDelta(Delta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				if i, ok := toolOf[ev.Index]; ok && ev.Delta.PartialJSON != "" {
					args[i] += ev.Delta.PartialJSON
					onDelta(Delta{ToolCallIndex: i, ArgsPiece: ev.Delta.PartialJSON})
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.failure(ctx, actx, err)
	}
	if err := actx.Err(); err != nil {
		return Response{}, p.failure(ctx, actx, err)
	}
	if events == 0 {
		return Response{}, &Error{Kind: KindStream, Message: "the model server answered with an empty stream"}
	}
	if !stopped {
		return Response{}, &Error{Kind: KindStream, Message: fmt.Sprintf("the stream ended after %d events before the message finished (no message_stop)", events)}
	}
	resp := Response{StopReason: string(msg.StopReason), Model: string(msg.Model),
		Usage: Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens}}
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			resp.Text += b.Text
		case "tool_use":
			a := string(b.Input)
			if t, ok := toolOf[int64(i)]; ok && args[t] != "" {
				a = args[t]
			}
			if a == "" {
				a = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: a})
		}
	}
	return resp, nil
}

// failure classifies a failed attempt: the caller's cancel, the attempt's
// own timeout, an HTTP error answer, an error event inside the stream, or a
// broken stream.
func (p *anthropicProvider) failure(ctx, actx context.Context, err error) *Error {
	if e := contextFailure(ctx, actx, p.cfg.Timeout, err); e != nil {
		return e
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return Classify(err)
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	detail := apiErr.Message
	if detail == "" {
		detail = string(apiErr.Type())
	}
	if apiErr.StatusCode >= 400 {
		e := statusError(apiErr.StatusCode, h, detail, p.keyEnv, time.Now())
		e.cause = err
		return e
	}
	// An "event: error" after a 200: the status says nothing, the type does.
	e := &Error{Message: fmt.Sprintf("the model server broke off the stream with %s: %s", apiErr.Type(), apiErr.Message), cause: err}
	switch apiErr.Type() {
	case "rate_limit_error":
		e.Kind = KindRateLimited
	case "overloaded_error", "api_error":
		e.Kind = KindServer
	default:
		e.Kind = KindStream
	}
	return e
}

func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, error) {
	model := p.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	maxTokens := firstPositive(req.MaxTokens, p.cfg.MaxTokens)
	if maxTokens == 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = append(params.System, anthropic.TextBlockParam{Text: req.System})
	}
	// The API wants alternating user and assistant messages: tool results
	// are tool_result blocks of a user message, so consecutive tool (and
	// user) messages merge into one user message, tool results first as the
	// API requires after a tool_use turn.
	type turn struct {
		user   bool
		blocks []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	add := func(user bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
		case RoleUser:
			if m.Content != "" {
				add(true, anthropic.NewTextBlock(m.Content))
			}
		case RoleTool:
			add(true, anthropic.NewToolResultBlock(m.ToolCallID, m.Content, false))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" { // the API refuses empty text blocks
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				// The API takes input as a JSON object; arguments the model
				// got wrong were already answered by an error tool result.
				input := json.RawMessage(c.Args)
				var obj map[string]any
				if json.Unmarshal(input, &obj) != nil || obj == nil {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			add(false, blocks...)
		default:
			return params, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("message %d has role %q: use system, user, assistant or tool", i, m.Role)}
		}
	}
	for _, t := range turns {
		if t.user {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(t.blocks...))
		}
	}
	for _, t := range req.Tools {
		schema, err := toolSchema(t)
		if err != nil {
			return params, err
		}
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type", "properties":
			case "required":
				if list, ok := v.([]any); ok {
					for _, r := range list {
						if s, ok := r.(string); ok {
							in.Required = append(in.Required, s)
						}
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

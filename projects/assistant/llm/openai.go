package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultOpenAIBaseURL is where the openai provider goes without a BaseURL.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1/"

// openAIProvider speaks OpenAI Chat Completions (streaming, tools) to OpenAI
// or any compatible server. The key lives only in svc's options.
type openAIProvider struct {
	description
	cfg    Config
	keyEnv string
	svc    openai.ChatCompletionService
}

func newOpenAI(cfg Config, key string, hc *http.Client) Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	// The service is built from explicit options only: openai.NewClient would
	// also read OPENAI_BASE_URL, OPENAI_ORG_ID… from the process environment,
	// which the operator configured for something else.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // one attempt per Complete: the caller retries
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return &openAIProvider{
		description: describe(cfg, cfg.APIKeyEnv),
		cfg:         cfg,
		keyEnv:      cfg.APIKeyEnv,
		svc:         openai.NewChatCompletionService(opts...),
	}
}

func (p *openAIProvider) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	actx, cancel := attemptContext(ctx, p.cfg.Timeout)
	defer cancel()

	stream := p.svc.NewStreaming(actx, params)
	defer stream.Close()
	var (
		acc      openai.ChatCompletionAccumulator
		chunks   int
		usage    Usage
		finished string
	)
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		if !acc.AddChunk(chunk) {
			return Response{}, &Error{Kind: KindStream, Message: fmt.Sprintf("the model server sent chunk %d that does not continue the stream (id %q)", chunks, chunk.ID)}
		}
		// Usage comes once, in the last chunk (stream_options.include_usage);
		// a server that repeats it carries running totals, so keep the last.
		if chunk.JSON.Usage.Valid() {
			usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != "" {
				finished = ch.FinishReason
			}
			if ch.Delta.Content != "" {
				onDelta(Delta{Text: ch.Delta.Content})
			}
			for _, tc := range ch.Delta.ToolCalls {
				d := Delta{ToolCallIndex: int(tc.Index), ToolCallID: tc.ID, ToolName: tc.Function.Name, ArgsPiece: tc.Function.Arguments}
				if !d.IsText() {
					onDelta(d)
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.failure(ctx, actx, err)
	}
	if err := actx.Err(); err != nil { // a cancel that raced the end of the body
		return Response{}, p.failure(ctx, actx, err)
	}
	if chunks == 0 {
		return Response{}, &Error{Kind: KindStream, Message: "the model server answered with an empty stream"}
	}
	if finished == "" || len(acc.Choices) == 0 {
		return Response{}, &Error{Kind: KindStream, Message: fmt.Sprintf("the stream ended after %d chunks before the model finished (no finish_reason)", chunks)}
	}
	msg := acc.Choices[0].Message
	resp := Response{Text: msg.Content, Usage: usage, StopReason: finished, Model: acc.Model}
	for _, tc := range msg.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return resp, nil
}

// failure classifies a failed attempt: the caller's cancel, the attempt's
// own timeout, an HTTP error answer, or a broken stream.
func (p *openAIProvider) failure(ctx, actx context.Context, err error) *Error {
	if e := contextFailure(ctx, actx, p.cfg.Timeout, err); e != nil {
		return e
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		e := statusError(apiErr.StatusCode, h, apiErr.Message, p.keyEnv, time.Now())
		e.cause = err
		return e
	}
	return Classify(err)
}

func (p *openAIProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	model := p.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if t := firstTemperature(req.Temperature, p.cfg.Temperature); t != nil {
		params.Temperature = openai.Float(*t)
	}
	// max_tokens rather than max_completion_tokens: every compatible server
	// (Ollama, vLLM, llama.cpp) knows it.
	if n := firstPositive(req.MaxTokens, p.cfg.MaxTokens); n > 0 {
		params.MaxTokens = openai.Int(int64(n))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case RoleTool:
			params.Messages = append(params.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return params, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("message %d has role %q: use system, user, assistant or tool", i, m.Role)}
		}
	}
	for _, t := range req.Tools {
		schema, err := toolSchema(t)
		if err != nil {
			return params, err
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return params, nil
}

// toolSchema decodes a tool's input schema; empty means an object with no
// declared properties.
func toolSchema(t Tool) (map[string]any, error) {
	if len(strings.TrimSpace(string(t.InputSchema))) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema == nil {
		return nil, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("tool %q has an input schema that is not a JSON object: %v", t.Name, err)}
	}
	return schema, nil
}

func firstTemperature(a, b *float64) *float64 {
	if a != nil {
		return a
	}
	return b
}

func firstPositive(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

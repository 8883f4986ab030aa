package llm

import (
	"context"
	"net/http"
)

type openAIProvider struct{ description }

func newOpenAI(cfg Config, key string, hc *http.Client) Provider {
	return &openAIProvider{description: describe(cfg, keyEnvOf(cfg, DefaultOpenAIKeyEnv))}
}

func (p *openAIProvider) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	return Response{}, configError("not yet")
}

package llm

import (
	"context"
	"net/http"
)

type anthropicProvider struct{ description }

func newAnthropic(cfg Config, key string, hc *http.Client) Provider {
	return &anthropicProvider{description: describe(cfg, keyEnvOf(cfg, DefaultAnthropicKeyEnv))}
}

func (p *anthropicProvider) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	return Response{}, configError("not yet")
}

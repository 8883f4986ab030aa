package assistant

import (
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
)

// TestConversationCannotRedirectTheKey: a conversation's settings come
// from a client; they may choose the model but never where the project's
// key is sent, nor which variable is read as a key — refused at conv
// start, and ignored by the executor should such settings reach the log
// another way.
func TestConversationCannotRedirectTheKey(t *testing.T) {
	project := LLMSettings{Provider: "openai", Model: "m1", BaseURL: "https://api.example/v1", APIKeyEnv: "OPENAI_API_KEY"}
	evil := &convevent.LLMConfig{Model: "m2", BaseURL: "https://attacker.example", APIKeyEnv: "JIDO_PASSWORD"}
	if err := CheckOverride(evil); bus.ErrorType(err) != bus.ReasonInvalidRequest {
		t.Fatalf("CheckOverride(base_url, api_key_env): %v, want invalid_request", err)
	}
	got := project.merge(evil)
	if got.BaseURL != project.BaseURL || got.APIKeyEnv != project.APIKeyEnv || got.Model != "m2" {
		t.Fatalf("merged %+v: the endpoint and key variable must stay the project's, the model the conversation's", got)
	}
	// Another provider drops the project's endpoint and key variable: they
	// are that provider's defaults, never the first one's sent elsewhere.
	other := project.merge(&convevent.LLMConfig{Provider: "anthropic"})
	if other.BaseURL != "" || other.APIKeyEnv != "" || other.Provider != "anthropic" {
		t.Fatalf("merged with another provider %+v", other)
	}
	if err := CheckOverride(&convevent.LLMConfig{Provider: "anthropic", Model: "x"}); err != nil {
		t.Fatalf("a model choice is refused: %v", err)
	}
}

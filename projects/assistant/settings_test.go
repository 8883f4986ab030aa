package assistant

import (
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// TestConversationCannotRedirectTheKey: a conversation's settings come
// from a client; they may choose the model and one of the node's
// providers but never where a key is sent, nor which variable is read as
// a key — refused at conv start, and without a member to carry them
// should such settings reach the log another way.
func TestConversationCannotRedirectTheKey(t *testing.T) {
	project := LLMSettings{Provider: "scripted", Model: "m1", Script: ".jido/s.jsonl"}
	evil := &conversation.LLMConfig{Model: "m2", BaseURL: "https://attacker.example", APIKeyEnv: "JIDO_PASSWORD"}
	err := evil.Check()
	if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), "serve --provider") {
		t.Fatalf("LLMConfig.Check(base_url, api_key_env): %v, want invalid_request naming the operator's setting", err)
	}
	if got := project.merge(evil); got.Model != "m2" || got.Script != project.Script {
		t.Fatalf("merged %+v: the model is the conversation's, the script the project's", got)
	}
	// Another provider drops the project's script.
	if other := project.merge(&conversation.LLMConfig{Provider: "anthropic"}); other.Script != "" || other.Provider != "anthropic" {
		t.Fatalf("merged with another provider %+v", other)
	}
	if err := (&conversation.LLMConfig{Provider: "anthropic", Model: "x"}).Check(); err != nil {
		t.Fatalf("a model choice is refused: %v", err)
	}
}

// A project chooses one of the node's providers by name, and among the
// models it allows; anything else is a config error naming the operator's
// setting.
func TestProjectChoosesAmongTheOperatorsProviders(t *testing.T) {
	a := New(Config{
		Providers: []llm.Endpoint{{Name: "local", Kind: llm.ProviderOpenAI, BaseURL: "http://127.0.0.1:9/v1", Models: []string{"llama3"}}},
		Getenv:    func(string) string { return "" },
	})
	defer a.Close()
	cases := []struct {
		s    LLMSettings
		want string // "" made
	}{
		{LLMSettings{Provider: "local", Model: "llama3"}, ""},
		{LLMSettings{Provider: "Local ", Model: "llama3"}, ""},
		{LLMSettings{Provider: "local", Model: "gpt-4o"}, "does not offer the model"},
		{LLMSettings{Provider: "openai", Model: "gpt-4o"}, "unknown llm provider"},
		{LLMSettings{Provider: "elsewhere", Model: "x"}, "serve --provider"},
		{LLMSettings{Model: "x"}, "llm.provider"},
	}
	for _, c := range cases {
		_, err := a.newProvider(c.s, t.TempDir())
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want an error saying %q", c.s, err, c.want)
		}
	}
}

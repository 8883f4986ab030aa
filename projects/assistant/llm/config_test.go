package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestNewConfigErrorsSayWhatToSet(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		env  map[string]string
		want []string
	}{
		{"no provider", Config{}, nil, []string{"provider", ".jido/config.yaml"}},
		{"unknown provider", Config{Provider: "gpt"}, nil, []string{`"gpt"`, "openai, anthropic or scripted"}},
		{"openai no model", Config{Provider: "openai"}, map[string]string{"OPENAI_API_KEY": "k"}, []string{"model"}},
		{"openai no key", Config{Provider: "openai", Model: "m"}, nil, []string{"set OPENAI_API_KEY or api_key_env in .jido/config.yaml"}},
		{"openai named key empty", Config{Provider: "openai", Model: "m", APIKeyEnv: "GATEWAY_KEY", BaseURL: "http://127.0.0.1:9/v1"}, nil, []string{"GATEWAY_KEY"}},
		{"anthropic no key", Config{Provider: "anthropic", Model: "m"}, nil, []string{"set ANTHROPIC_API_KEY or api_key_env in .jido/config.yaml"}},
		{"bad base url", Config{Provider: "openai", Model: "m", BaseURL: "localhost:11434"}, map[string]string{"OPENAI_API_KEY": "k"}, []string{"base_url", "localhost:11434"}},
		{"negative timeout", Config{Provider: "openai", Model: "m", Timeout: -1}, map[string]string{"OPENAI_API_KEY": "k"}, []string{"timeout"}},
		{"negative max tokens", Config{Provider: "anthropic", Model: "m", MaxTokens: -5}, map[string]string{"ANTHROPIC_API_KEY": "k"}, []string{"max_tokens"}},
	}
	for _, c := range cases {
		_, err := New(c.cfg, env(c.env), nil)
		e := Classify(err)
		if e == nil || e.Kind != KindConfig {
			t.Errorf("%s: want a config error, got %v", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(e.Message, w) {
				t.Errorf("%s: message %q does not say %q", c.name, e.Message, w)
			}
		}
	}
}

func TestNewAcceptsKeylessLocalServer(t *testing.T) {
	// Ollama and friends need no key: a base URL without api_key_env is fine.
	if _, err := New(Config{Provider: "openai", Model: "llama3", BaseURL: "http://127.0.0.1:11434/v1"}, env(nil), nil); err != nil {
		t.Fatalf("keyless local server: %v", err)
	}
}

func TestProvidersNeverPrintTheKey(t *testing.T) {
	const secret = "sk-very-secret-0123456789"
	for _, cfg := range []Config{
		{Provider: "openai", Model: "gpt-x", APIKeyEnv: "K"},
		{Provider: "anthropic", Model: "claude-x", APIKeyEnv: "K"},
	} {
		p, err := New(cfg, env(map[string]string{"K": secret}), nil)
		if err != nil {
			t.Fatal(err)
		}
		var outs []string
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			outs = append(outs, fmt.Sprintf(verb, p))
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("%s: marshal: %v", cfg.Provider, err)
		}
		outs = append(outs, string(js))
		for _, o := range outs {
			if strings.Contains(o, secret) || strings.Contains(o, fmt.Sprintf("%x", secret)) {
				t.Fatalf("%s: the key leaks in %q", cfg.Provider, o)
			}
		}
		if !strings.Contains(outs[0], cfg.Model) || !strings.Contains(outs[0], "K") {
			t.Errorf("%s: String %q should name the model and the key's variable", cfg.Provider, outs[0])
		}
	}
}

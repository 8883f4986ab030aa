package llm

import (
	"context"
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
		{"openai no key", Config{Provider: "openai", Model: "m", APIKeyEnv: "OPENAI_API_KEY"}, nil, []string{"export OPENAI_API_KEY=", "serve --provider"}},
		{"openai named key empty", Config{Provider: "openai", Name: "gateway", Model: "m", APIKeyEnv: "GATEWAY_KEY", BaseURL: "http://127.0.0.1:9/v1"}, map[string]string{"OPENAI_API_KEY": "k"}, []string{"provider gateway", "GATEWAY_KEY"}},
		{"anthropic no key", Config{Provider: "anthropic", Model: "m", APIKeyEnv: "ANTHROPIC_API_KEY"}, nil, []string{"export ANTHROPIC_API_KEY="}},
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

// A provider that names no key variable sends no key, whatever keys the
// node holds: a base_url without api_key_env once got OPENAI_API_KEY.
func TestNoKeyVariableSendsNoKey(t *testing.T) {
	keys := env(map[string]string{"OPENAI_API_KEY": "sk-openai-node-key", "ANTHROPIC_API_KEY": "sk-ant-node-key"})
	for _, kind := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			fs := newFakeServer(t, reply{status: 500, body: `{"error":{"message":"x"}}`})
			base := fs.URL
			if kind == ProviderOpenAI {
				base += "/v1"
			}
			p, err := New(Config{Provider: kind, Model: "m", BaseURL: base}, keys, fs.Client())
			if err != nil {
				t.Fatal(err)
			}
			_, _ = p.Complete(context.Background(), sampleRequest(), nil)
			req, _ := fs.last()
			for name, vals := range req.Header {
				for _, v := range vals {
					if strings.Contains(v, "node-key") {
						t.Fatalf("the %s provider without a key variable sent %s: %s", kind, name, v)
					}
				}
			}
		})
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

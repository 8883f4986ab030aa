package llm

import (
	"strings"
	"testing"
)

func TestEndpointsMergeTheOperatorsOverTheDefaults(t *testing.T) {
	got, err := Endpoints(
		Endpoint{Name: "local", Kind: ProviderOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Models: []string{"llama3.1:8b"}},
		Endpoint{Name: "openai", Kind: ProviderOpenAI, BaseURL: "https://gw.example/v1", KeyEnv: "GW_KEY"},
	)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range got {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "openai,anthropic,local" || got[0].KeyEnv != "GW_KEY" || got[1].KeyEnv != DefaultAnthropicKeyEnv {
		t.Fatalf("endpoints %+v", got)
	}
	if !got[2].Allows("llama3.1:8b") || got[2].Allows("gpt-4o") || !got[1].Allows("anything") {
		t.Fatal("Allows: models bound the choice; none allows any")
	}
}

func TestEndpointValidateSaysWhatIsWrong(t *testing.T) {
	cases := []struct {
		e    Endpoint
		want string
	}{
		{Endpoint{Name: "Local", Kind: "openai"}, "lower-case"},
		{Endpoint{Name: "scripted", Kind: "openai"}, "built-in scripted"},
		{Endpoint{Name: "x", Kind: "gpt"}, "kind"},
		{Endpoint{Name: "x", Kind: "openai", BaseURL: "localhost:11434"}, "http(s) URL"},
		{Endpoint{Name: "x", Kind: "openai", BaseURL: "https://user:pw-in-url@h/v1"}, "user info"},
		{Endpoint{Name: "x", Kind: "openai", KeyEnv: "sk-abc-the-key-itself"}, "not a variable name"},
		{Endpoint{Name: "x", Kind: "openai", Models: []string{""}}, "empty model"},
	}
	for _, c := range cases {
		err := c.e.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want it to say %q", c.e, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw-in-url") {
			t.Errorf("the error shows the URL's password: %v", err)
		}
	}
	if _, err := Endpoints(Endpoint{Name: "a", Kind: "openai"}, Endpoint{Name: "a", Kind: "anthropic"}); err == nil {
		t.Fatal("a name given twice accepted")
	}
}

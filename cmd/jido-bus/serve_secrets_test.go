package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

func TestServeProvidersAndCommandEnv(t *testing.T) {
	path := writeConfig(t, `
commands:
  env: [PATH, LANG, GOPATH]
providers:
  - name: local
    kind: openai
    base_url: http://127.0.0.1:11434/v1
    models:
      - llama3.1:8b
  - {name: team, kind: anthropic, key_env: TEAM_KEY}
http:
  listen: 127.0.0.1:0
  token_env: MY_HTTP_TOKEN
  tokens:
    - {name: ci, env: CI_TOKEN}
`)
	env := map[string]string{"MY_HTTP_TOKEN": "t1", "CI_TOKEN": "t2"}
	cfg, err := serveFlags(t, env, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Endpoint{
		{Name: "local", Kind: "openai", BaseURL: "http://127.0.0.1:11434/v1", Models: []string{"llama3.1:8b"}},
		{Name: "team", Kind: "anthropic", KeyEnv: "TEAM_KEY"},
	}
	if !slices.Equal(cfg.commandEnv, []string{"PATH", "LANG", "GOPATH"}) || len(cfg.providers) != 2 ||
		cfg.providers[0].Name != want[0].Name || cfg.providers[0].BaseURL != want[0].BaseURL || !slices.Equal(cfg.providers[0].Models, want[0].Models) ||
		cfg.providers[1].KeyEnv != "TEAM_KEY" || cfg.providers[1].Kind != "anthropic" {
		t.Fatalf("command env %q, providers %+v", cfg.commandEnv, cfg.providers)
	}
	for _, name := range []string{envPassword, envToken, "MY_HTTP_TOKEN", "CI_TOKEN"} {
		if !slices.Contains(cfg.secretEnv, name) {
			t.Errorf("secret variables %q do not name %s", cfg.secretEnv, name)
		}
	}
	// Flags win over the file, whole.
	cfg, err = serveFlags(t, env, "--config", path, "--command-env", "PATH", "--command-env", "TZ",
		"--provider", "gw=openai,base_url=https://gw.example/v1,key_env=GW_KEY,model=a,model=b:1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.commandEnv, []string{"PATH", "TZ"}) || len(cfg.providers) != 1 ||
		cfg.providers[0].Name != "gw" || cfg.providers[0].KeyEnv != "GW_KEY" || !slices.Equal(cfg.providers[0].Models, []string{"a", "b:1"}) {
		t.Fatalf("command env %q, providers %+v", cfg.commandEnv, cfg.providers)
	}
	// Prices: in the file by model, on the flag as MODEL:IN:OUT (a model
	// name may hold colons).
	priced := writeConfig(t, `
providers:
  - name: local
    kind: openai
    prices:
      gpt-4o-mini: {input_per_mtok: 0.15, output_per_mtok: 0.6}
`)
	if cfg, err = serveFlags(t, nil, "--config", priced); err != nil || cfg.providers[0].Prices["gpt-4o-mini"] != (llm.Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}) {
		t.Fatalf("prices from the file: %+v %v", cfg.providers, err)
	}
	if cfg, err = serveFlags(t, nil, "--provider", "local=openai,price=llama3.1:8b:0:0.5,price=m:1:2"); err != nil ||
		cfg.providers[0].Prices["llama3.1:8b"] != (llm.Price{OutputPerMTok: 0.5}) || cfg.providers[0].Prices["m"] != (llm.Price{InputPerMTok: 1, OutputPerMTok: 2}) {
		t.Fatalf("prices from the flag: %+v %v", cfg.providers, err)
	}
	// Windows: in the file by model, on the flag as MODEL:TOKENS; the
	// default window from --context-window or the file's context_window.
	windowed := writeConfig(t, `
context_window: 4000
providers:
  - name: local
    kind: openai
    windows:
      gpt-4o-mini: 128000
`)
	if cfg, err = serveFlags(t, nil, "--config", windowed); err != nil || cfg.providers[0].Windows["gpt-4o-mini"] != 128000 || cfg.contextWindow != 4000 {
		t.Fatalf("windows from the file: %+v %d %v", cfg.providers, cfg.contextWindow, err)
	}
	if cfg, err = serveFlags(t, nil, "--provider", "local=openai,window=llama3.1:8b:8192", "--context-window", "500"); err != nil ||
		cfg.providers[0].Windows["llama3.1:8b"] != 8192 || cfg.contextWindow != 500 {
		t.Fatalf("windows from the flags: %+v %d %v", cfg.providers, cfg.contextWindow, err)
	}
	if cfg, err = serveFlags(t, nil, "--command-env", ""); err != nil || cfg.commandEnv == nil || len(cfg.commandEnv) != 0 {
		t.Fatalf("--command-env '': %q %v, want none (not the default)", cfg.commandEnv, err)
	}
	if cfg, err = serveFlags(t, nil); err != nil || cfg.commandEnv != nil || cfg.providers != nil {
		t.Fatalf("no setting: %q %+v %v, want the defaults", cfg.commandEnv, cfg.providers, err)
	}
}

func TestServeProviderErrorsSayWhatToWrite(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "local"}, "NAME=KIND"},
		{[]string{"--provider", "local=openai,url=http://x"}, `unknown key "url"`},
		{[]string{"--provider", "local=openai,http://x"}, "KEY=VALUE"},
		{[]string{"--provider", "local=gpt"}, "kind"},
		{[]string{"--provider", "a=openai", "--provider", "a=anthropic"}, "twice"},
		{[]string{"--provider", "x=openai,key_env=sk-the-key"}, "not a variable name"},
		{[]string{"--provider", "x=openai,price=m:1"}, "MODEL:IN:OUT"},
		{[]string{"--provider", "x=openai,price=m:one:2"}, `input price "one"`},
		{[]string{"--provider", "x=openai,price=m:1:-2"}, "output_per_mtok -2"},
		{[]string{"--provider", "x=openai,window=m"}, "MODEL:TOKENS"},
		{[]string{"--provider", "x=openai,window=m:big"}, "MODEL:TOKENS"},
		{[]string{"--provider", "x=openai,window=m:10"}, "at least 100"},
		{[]string{"--context-window", "5"}, "--context-window 5"},
	}
	for _, c := range cases {
		_, err := serveFlags(t, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want it to say %q", c.args, err, c.want)
		}
	}
	if _, err := serveFlags(t, nil, "--config", writeConfig(t, "providers:\n  - {name: x, kind: openai, prices: {m: {input: 1}}}\n")); err == nil || !strings.Contains(err.Error(), "input") {
		t.Errorf("a price member misspelt: %v, want refused naming it", err)
	}
	path := writeConfig(t, "providers:\n  - {name: x, kind: openai, api_key: sk-inline}\n")
	if _, err := serveFlags(t, nil, "--config", path); err == nil || !strings.Contains(err.Error(), "api_key") {
		t.Errorf("an inline key in the file: %v, want refused naming it", err)
	}
}

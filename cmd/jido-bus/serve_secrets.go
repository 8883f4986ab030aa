package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// serveCommandsFile is the commands: section of serve --config: what the
// node's operator lets projects' commands inherit from its environment.
type serveCommandsFile struct {
	Env []string `yaml:"env"`
}

// serveProviderFile is one entry of providers: in serve --config: a model
// provider projects may choose by name.
type serveProviderFile struct {
	Name    string   `yaml:"name"`
	Kind    string   `yaml:"kind"`
	BaseURL string   `yaml:"base_url"`
	KeyEnv  string   `yaml:"key_env"`
	Models  []string `yaml:"models"`
	// Prices are USD per million tokens by model name (the llm.completed
	// of a priced model records cost_usd).
	Prices map[string]servePriceFile `yaml:"prices"`
	// Windows are the models' context windows in tokens, by model name
	// (a conversation compacts its context near its model's window).
	Windows map[string]int64 `yaml:"windows"`
}

// servePriceFile is one model's price in a providers: entry.
type servePriceFile struct {
	Input  float64 `yaml:"input_per_mtok"`
	Output float64 `yaml:"output_per_mtok"`
}

func addServeSecretFlags(cmd *cobra.Command, cfg *serveConfig) {
	f := cmd.Flags()
	f.StringSliceVar(&cfg.commandEnv, "command-env", nil, "the variables of the node's environment projects' commands may inherit, e.g. PATH,LANG,GOPATH (a project's commands.env chooses among them; default PATH,LANG,LC_ALL,TERM,TZ; the node's own credentials and keys are never allowed)")
	f.StringArrayVar(&cfg.providerFlags, "provider", nil, "a model provider projects may choose by name: NAME=KIND[,base_url=URL][,key_env=VAR][,model=M]… with KIND openai (any OpenAI-compatible server) or anthropic; key_env names the variable holding its key (none: no key is sent), model (repeatable) the models allowed (none: any), price=MODEL:IN:OUT (repeatable) what a model costs in USD per million input and output tokens (its llm.completed then records cost_usd), window=MODEL:TOKENS (repeatable) a model's context window (a conversation compacts near it; default --context-window). openai and anthropic exist unless redefined (repeatable)")
	f.Int64Var(&cfg.contextWindow, "context-window", 0, fmt.Sprintf("the context window, in tokens, of a model its provider gives none (--provider …,window=MODEL:TOKENS): a conversation compacts its context, asking the model for a summary of the older messages, once it reaches %d %% of its model's window (default %d)", conversation.CompactAtPercent, llm.DefaultWindow))
}

// resolveServeSecrets completes what commands inherit and the providers
// from the file's sections (what no flag gave), and names the variables
// that hold the node's credentials.
func resolveServeSecrets(cfg *serveConfig, f serveFile, changed func(string) bool) error {
	if !changed("context-window") {
		cfg.contextWindow = f.ContextWindow
	}
	if w := cfg.contextWindow; w != 0 && w < llm.MinWindow {
		return fmt.Errorf("--context-window %d: give the context window in tokens, at least %d (e.g. 128000), or leave it out for %d", w, llm.MinWindow, llm.DefaultWindow)
	}
	if !changed("command-env") && f.Commands.Env != nil {
		cfg.commandEnv = f.Commands.Env
	}
	if changed("command-env") && cfg.commandEnv == nil {
		cfg.commandEnv = []string{} // --command-env '': none
	}
	if changed("provider") {
		cfg.providers = nil
		for _, s := range cfg.providerFlags {
			p, err := parseProviderFlag(s)
			if err != nil {
				return err
			}
			cfg.providers = append(cfg.providers, p)
		}
	} else {
		for _, p := range f.Providers {
			e := llm.Endpoint{Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, KeyEnv: p.KeyEnv, Models: p.Models}
			for model, price := range p.Prices {
				if e.Prices == nil {
					e.Prices = map[string]llm.Price{}
				}
				e.Prices[model] = llm.Price{InputPerMTok: price.Input, OutputPerMTok: price.Output}
			}
			if len(p.Windows) > 0 {
				e.Windows = p.Windows
			}
			cfg.providers = append(cfg.providers, e)
		}
	}
	if _, err := llm.Endpoints(cfg.providers...); err != nil {
		return fmt.Errorf("%s: %w", providerSetting(changed), err)
	}
	cfg.secretEnv = []string{envPassword, envToken}
	if cfg.httpTokenEnv != "" {
		cfg.secretEnv = append(cfg.secretEnv, cfg.httpTokenEnv)
	}
	for _, t := range f.HTTP.Tokens {
		cfg.secretEnv = append(cfg.secretEnv, t.Env)
	}
	return nil
}

func providerSetting(changed func(string) bool) string {
	if changed("provider") {
		return "--provider"
	}
	return "--config: providers"
}

// parseProviderFlag reads NAME=KIND[,base_url=URL][,key_env=VAR][,model=M]….
func parseProviderFlag(s string) (llm.Endpoint, error) {
	const form = "NAME=KIND[,base_url=URL][,key_env=VAR][,model=M]…[,price=MODEL:IN:OUT]…[,window=MODEL:TOKENS]…, e.g. --provider local=openai,base_url=http://127.0.0.1:11434/v1,model=llama3.1:8b"
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return llm.Endpoint{}, fmt.Errorf("--provider %q: want %s", s, form)
	}
	parts := strings.Split(rest, ",")
	e := llm.Endpoint{Name: name, Kind: parts[0]}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return llm.Endpoint{}, fmt.Errorf("--provider %s: %q is not KEY=VALUE; want %s", name, p, form)
		}
		switch k {
		case "base_url":
			e.BaseURL = v
		case "key_env":
			e.KeyEnv = v
		case "model":
			e.Models = append(e.Models, v)
		case "price":
			model, price, err := parsePrice(v)
			if err != nil {
				return llm.Endpoint{}, fmt.Errorf("--provider %s: price=%s: %w", name, v, err)
			}
			if e.Prices == nil {
				e.Prices = map[string]llm.Price{}
			}
			e.Prices[model] = price
		case "window":
			// The tokens are the last field, so a model name may hold
			// colons (llama3.1:8b:8192).
			j := strings.LastIndexByte(v, ':')
			tokens, err := strconv.ParseInt(v[j+1:], 10, 64)
			if j <= 0 || err != nil {
				return llm.Endpoint{}, fmt.Errorf("--provider %s: window=%s: want MODEL:TOKENS, the model's context window in tokens, e.g. window=gpt-4o-mini:128000", name, v)
			}
			if e.Windows == nil {
				e.Windows = map[string]int64{}
			}
			e.Windows[v[:j]] = tokens
		default:
			return llm.Endpoint{}, fmt.Errorf("--provider %s: unknown key %q: want base_url, key_env, model, price or window", name, k)
		}
	}
	return e, nil
}

// parsePrice reads MODEL:IN:OUT, USD per million input and output tokens.
// The amounts are the last two fields, so a model name may hold colons
// (llama3.1:8b:0:0).
func parsePrice(v string) (string, llm.Price, error) {
	const want = "want MODEL:IN:OUT in USD per million input and output tokens, e.g. price=gpt-4o-mini:0.15:0.6"
	j := strings.LastIndexByte(v, ':')
	if j < 0 {
		return "", llm.Price{}, errors.New(want)
	}
	i := strings.LastIndexByte(v[:j], ':')
	if i <= 0 {
		return "", llm.Price{}, errors.New(want)
	}
	model, in, out := v[:i], v[i+1:j], v[j+1:]
	var p llm.Price
	var err error
	if p.InputPerMTok, err = strconv.ParseFloat(in, 64); err != nil {
		return "", llm.Price{}, fmt.Errorf("input price %q is not a number: %s", in, want)
	}
	if p.OutputPerMTok, err = strconv.ParseFloat(out, 64); err != nil {
		return "", llm.Price{}, fmt.Errorf("output price %q is not a number: %s", out, want)
	}
	return model, p, nil
}

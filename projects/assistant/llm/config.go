package llm

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Provider names of [Config.Provider].
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderScripted  = "scripted"
)

// The key variables of DefaultEndpoints.
const (
	DefaultOpenAIKeyEnv    = "OPENAI_API_KEY"
	DefaultAnthropicKeyEnv = "ANTHROPIC_API_KEY"
)

// DefaultAnthropicMaxTokens is the output limit sent to Anthropic, whose API
// requires one, when neither the config nor the request sets it.
const DefaultAnthropicMaxTokens = 4096

// Config says which model to talk to and how. It never holds a key, only the
// name of the environment variable that does, so it may be logged. Where
// the key goes (BaseURL) and which variable holds it (APIKeyEnv) come from
// an Endpoint of the node's operator, never from a project.
type Config struct {
	// Provider is openai (any OpenAI-compatible server), anthropic or scripted.
	Provider string
	// Name is the operator's name for the provider (Endpoint.Name), for
	// messages; "" is Provider.
	Name string
	// Model is required for openai and anthropic; scripted reports it as the
	// answering model (default "scripted").
	Model string
	// BaseURL overrides the API's address (http or https), e.g.
	// http://127.0.0.1:11434/v1 for Ollama.
	BaseURL string
	// APIKeyEnv names the environment variable holding the key; "" sends
	// no key (a local server needs none). A variable named and empty is an
	// error: it is never replaced by another.
	APIKeyEnv string
	// Temperature and MaxTokens are defaults that a Request may override.
	Temperature *float64
	MaxTokens   int
	// Timeout bounds one attempt, from sending the request to the last
	// piece of the stream; 0 means no bound beyond the caller's context.
	Timeout time.Duration
	// Script is the scripted provider's JSONL file, read from Files.
	Script string
	// Files is the folder Script is read from (the project's root, as an
	// os.Root's FS, so that a script cannot name a file outside it); nil
	// reads Script as a path of the file system.
	Files fs.FS
}

// New builds the provider cfg describes. getenv reads the key variable (pass
// os.Getenv); httpClient carries the requests (nil means a fresh client with
// no overall timeout, since a stream may be long). Every error is an *Error
// of Kind config whose message says what to set.
func New(cfg Config, getenv func(string) string, httpClient *http.Client) (Provider, error) {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	if cfg.Timeout < 0 {
		return nil, configError("llm timeout %v is negative: set timeout_ms to 0 (none) or more", cfg.Timeout)
	}
	if cfg.MaxTokens < 0 {
		return nil, configError("llm max_tokens %d is negative: set it to 0 (the provider's default) or more", cfg.MaxTokens)
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, configError("llm base_url %q is not an http(s) URL: set it like http://127.0.0.1:11434/v1", cfg.BaseURL)
		}
	}
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case ProviderOpenAI:
		cfg.Provider = ProviderOpenAI
		key, err := apiKey(cfg, getenv)
		if err != nil {
			return nil, err
		}
		return newOpenAI(cfg, key, httpClient), nil
	case ProviderAnthropic:
		cfg.Provider = ProviderAnthropic
		key, err := apiKey(cfg, getenv)
		if err != nil {
			return nil, err
		}
		return newAnthropic(cfg, key, httpClient), nil
	case ProviderScripted:
		cfg.Provider = ProviderScripted
		return newScripted(cfg)
	case "":
		return nil, configError("no llm provider: set llm.provider in .jido/config.yaml to one of the node's providers (openai, anthropic, scripted, or one its operator configured with serve --provider)")
	default:
		return nil, configError("unknown llm provider %q: use openai, anthropic or scripted", cfg.Provider)
	}
}

// apiKey checks the model and reads the key: none when no variable is
// named. A named variable that is empty is an error, never a reason to read
// another: a key goes only where its operator sent it.
func apiKey(cfg Config, getenv func(string) string) (string, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return "", configError("no model for the %s provider: set llm.model in .jido/config.yaml (or the conversation's llm.model)", cfg.name())
	}
	if cfg.APIKeyEnv == "" {
		return "", nil
	}
	key := strings.TrimSpace(getenv(cfg.APIKeyEnv))
	if key == "" {
		return "", configError("the provider %s reads its key from %s, which is not set where the node runs: export %s=… and restart the node (the variable is its operator's choice: serve --provider, or providers: in the serve config)", cfg.name(), cfg.APIKeyEnv, cfg.APIKeyEnv)
	}
	return key, nil
}

// name is the provider as the operator calls it.
func (c Config) name() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Provider
}

// description is what a provider shows of itself: everything but the key.
type description struct {
	Provider  string `json:"provider"`
	Model     string `json:"model,omitempty"`
	BaseURL   string `json:"base_url,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	Script    string `json:"script,omitempty"`
}

func describe(cfg Config, keyEnv string) description {
	return description{Provider: cfg.Provider, Model: cfg.Model, BaseURL: cfg.BaseURL, APIKeyEnv: keyEnv, Script: cfg.Script}
}

func (d description) String() string {
	s := "llm." + d.Provider + "{model=" + d.Model
	if d.BaseURL != "" {
		s += " base_url=" + d.BaseURL
	}
	if d.APIKeyEnv != "" {
		s += " key=$" + d.APIKeyEnv
	}
	if d.Script != "" {
		s += " script=" + d.Script
	}
	return s + "}"
}

// Format prints the description for every verb, so %#v or %+v of a provider
// cannot reach the SDK client and the key inside it.
func (d description) Format(f fmt.State, verb rune) {
	switch verb {
	case 'q':
		fmt.Fprintf(f, "%q", d.String())
	default:
		_, _ = f.Write([]byte(d.String()))
	}
}

// MarshalJSON marshals the description only.
func (d description) MarshalJSON() ([]byte, error) {
	type plain description
	return json.Marshal(plain(d))
}

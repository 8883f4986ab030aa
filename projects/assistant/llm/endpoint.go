package llm

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Endpoint is a model provider the node's operator configured
// (serve --provider, or providers: in the serve config): the name a
// project's .jido/config.yaml chooses it by, the API it speaks, where it
// is, the variable holding its key and the models it may be asked for.
// Where a key is sent is the operator's decision alone: a project that
// could name an address and a variable could send any secret of the node
// to a listener of its own.
type Endpoint struct {
	Name string `json:"name"`
	// Kind is the API: ProviderOpenAI (any OpenAI-compatible server) or
	// ProviderAnthropic.
	Kind string `json:"kind"`
	// BaseURL is where the API is (http or https); "" is the kind's own.
	BaseURL string `json:"base_url,omitempty"`
	// KeyEnv names the variable of the node's environment holding the
	// key; "" sends no key (a local server).
	KeyEnv string `json:"key_env,omitempty"`
	// Models are the models a project may ask for; empty allows any.
	Models []string `json:"models,omitempty"`
	// Prices are what its models cost, by model name; a model without
	// one records no cost_usd.
	Prices map[string]Price `json:"prices,omitempty"`
	// Windows are its models' context windows in tokens, by model name;
	// a model without one has the node's default (serve
	// --context-window, else DefaultWindow). A conversation compacts its
	// context when it nears its model's window.
	Windows map[string]int64 `json:"windows,omitempty"`
}

// DefaultEndpoints are the providers every node has unless its operator
// configures one of the same name: openai with OPENAI_API_KEY against
// api.openai.com and anthropic with ANTHROPIC_API_KEY against
// api.anthropic.com, any model. Exporting the key is then all it takes.
func DefaultEndpoints() []Endpoint {
	return []Endpoint{
		{Name: ProviderOpenAI, Kind: ProviderOpenAI, KeyEnv: DefaultOpenAIKeyEnv},
		{Name: ProviderAnthropic, Kind: ProviderAnthropic, KeyEnv: DefaultAnthropicKeyEnv},
	}
}

// Endpoints returns the node's providers: DefaultEndpoints, each replaced
// by the operator's of the same name, then the operator's others in their
// order. Each of the operator's is validated; a name given twice is an
// error.
func Endpoints(operator ...Endpoint) ([]Endpoint, error) {
	out := DefaultEndpoints()
	seen := map[string]bool{}
	for _, e := range operator {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("provider %q is configured twice: give each provider its own name", e.Name)
		}
		seen[e.Name] = true
		if i := slices.IndexFunc(out, func(d Endpoint) bool { return d.Name == e.Name }); i >= 0 {
			out[i] = e
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

var (
	endpointName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	envVarName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Validate says what is wrong with e, naming the setting to fix.
func (e Endpoint) Validate() error {
	if !endpointName.MatchString(e.Name) {
		return fmt.Errorf("provider name %q: want lower-case letters, digits, '-' and '_' (e.g. local, openai, team-gateway)", e.Name)
	}
	if e.Name == ProviderScripted {
		return fmt.Errorf("provider name %q is the built-in scripted provider's (it plays a project's script file and sends nothing anywhere); choose another name", e.Name)
	}
	switch e.Kind {
	case ProviderOpenAI, ProviderAnthropic:
	default:
		return fmt.Errorf("provider %s: kind %q: want %s (any OpenAI-compatible server) or %s", e.Name, e.Kind, ProviderOpenAI, ProviderAnthropic)
	}
	if e.BaseURL != "" {
		u, err := url.Parse(e.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("provider %s: base_url %q is not an http(s) URL: give it like http://127.0.0.1:11434/v1", e.Name, redactUserInfo(e.BaseURL))
		}
		if u.User != nil {
			return fmt.Errorf("provider %s: base_url %s holds user info: a credential in a URL ends up in logs; put the key in a variable and name it with key_env", e.Name, redactUserInfo(e.BaseURL))
		}
	}
	if e.KeyEnv != "" && !envVarName.MatchString(e.KeyEnv) {
		return fmt.Errorf("provider %s: key_env %q is not a variable name: name the environment variable that holds the key (e.g. OPENAI_API_KEY), never the key itself", e.Name, e.KeyEnv)
	}
	for _, m := range e.Models {
		if strings.TrimSpace(m) == "" {
			return fmt.Errorf("provider %s: an empty model name in models", e.Name)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(e.Prices)) {
		if err := e.Prices[m].validate(e.Name, m); err != nil {
			return err
		}
	}
	for _, m := range slices.Sorted(maps.Keys(e.Windows)) {
		if err := validateWindow(e.Name, m, e.Windows[m]); err != nil {
			return err
		}
	}
	return nil
}

// Allows reports whether a project may ask e for model.
func (e Endpoint) Allows(model string) bool {
	return len(e.Models) == 0 || slices.Contains(e.Models, model)
}

// redactUserInfo hides what is before '@' in a URL's authority, so an
// error that quotes a bad base_url never shows a password in it.
func redactUserInfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	auth, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = "xxxxx@" + auth[i+1:]
	}
	if path != "" || strings.Contains(rest, "/") {
		return scheme + "://" + auth + "/" + path
	}
	return scheme + "://" + auth
}

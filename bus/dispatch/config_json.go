package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// configJSON is the object form of a single-target Config. Durations are
// Go duration strings so that a person can write and read them.
type configJSON struct {
	Kind        Kind              `json:"kind"`
	Subject     string            `json:"subject,omitempty"`
	Mode        string            `json:"mode,omitempty"`
	URL         string            `json:"url,omitempty"`
	Secret      string            `json:"secret,omitempty"`
	SecretEnv   string            `json:"secret_env,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Timeout     string            `json:"timeout,omitempty"`
	MaxAttempts int               `json:"max_attempts,omitempty"`
	Backoff     string            `json:"backoff,omitempty"`
	MaxBackoff  string            `json:"max_backoff,omitempty"`
	Level       string            `json:"level,omitempty"`
}

// MarshalJSON writes c in the shortest form that reads back the same: a
// list as a JSON array, a target with nothing but its kind as the kind's
// name ("nats", with the empty kind written out), anything else as an
// object. The secret is written as is: the result is for storage, not for
// display (String redacts it).
func (c Config) MarshalJSON() ([]byte, error) {
	if c.Targets != nil {
		return json.Marshal(c.Targets)
	}
	bare := true
	for _, f := range c.fieldUses() {
		bare = bare && !f.set
	}
	if bare {
		return json.Marshal(string(c.kind()))
	}
	return json.Marshal(configJSON{
		Kind:        c.kind(),
		Subject:     c.Subject,
		Mode:        c.Mode,
		URL:         c.URL,
		Secret:      c.Secret,
		SecretEnv:   c.SecretEnv,
		Headers:     c.Headers,
		Timeout:     formatDuration(c.Timeout),
		MaxAttempts: c.MaxAttempts,
		Backoff:     formatDuration(c.Backoff),
		MaxBackoff:  formatDuration(c.MaxBackoff),
		Level:       c.Level,
	})
}

// UnmarshalJSON reads any of the three forms of the package doc and
// validates the result, so a decoded Config is always valid. Unknown object
// fields are refused, because a misspelt "secret" or "max_attempts" would
// otherwise be silently ignored. JSON null leaves c unchanged. Errors are
// *bus.Error values of type bus.ReasonInvalidRequest naming the field.
func (c *Config) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	var d Config
	if err := d.decode(data, ""); err != nil {
		return err
	}
	if err := d.validate(""); err != nil {
		return err
	}
	*c = d
	return nil
}

func (c *Config) decode(data []byte, path string) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return configError(path, "is empty; want a kind name, an object or a list")
	}
	switch data[0] {
	case '"':
		var name string
		if err := json.Unmarshal(data, &name); err != nil {
			return configError(path, "is not a valid JSON string: %v", err)
		}
		switch k := Kind(name); k {
		case KindNATS, KindLog, KindNoop:
			*c = Config{Kind: k}
			return nil
		case KindWebhook:
			return configError(path, `"webhook" needs a url and a secret; write {"kind":"webhook","url":"…","secret_env":"JIDO_SECRET_…"}`)
		}
		return configError(path, "unknown kind %q; want \"nats\", \"log\", \"noop\" or an object", name)
	case '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return configError(path, "is not a valid JSON list: %v", err)
		}
		targets := make([]Config, len(raws))
		for i, raw := range raws {
			if err := targets[i].decode(raw, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		*c = Config{Targets: targets}
		return nil
	case '{':
		return c.decodeObject(data, path)
	}
	return configError(path, "is %s; want a kind name, an object or a list", firstWord(data))
}

func (c *Config) decodeObject(data []byte, path string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w configJSON
	if err := dec.Decode(&w); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return configError(path, "has the unknown field %s", name)
		}
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return fieldError(path, te.Field, "want a JSON value for a Go %s, got %s", te.Type, te.Value)
		}
		return configError(path, "is not a valid JSON object: %v", err)
	}
	if dec.More() {
		return configError(path, "has data after the object")
	}
	d := Config{
		Kind:        w.Kind,
		Subject:     w.Subject,
		Mode:        w.Mode,
		URL:         w.URL,
		Secret:      w.Secret,
		SecretEnv:   w.SecretEnv,
		Headers:     w.Headers,
		MaxAttempts: w.MaxAttempts,
		Level:       w.Level,
	}
	for _, f := range []struct {
		name string
		text string
		dst  *time.Duration
	}{
		{"timeout", w.Timeout, &d.Timeout},
		{"backoff", w.Backoff, &d.Backoff},
		{"max_backoff", w.MaxBackoff, &d.MaxBackoff},
	} {
		if f.text == "" {
			continue
		}
		v, err := time.ParseDuration(f.text)
		if err != nil {
			return fieldError(path, f.name, "%q is not a duration such as \"500ms\" or \"10s\"", f.text)
		}
		*f.dst = v
	}
	*c = d
	return nil
}

// String returns c as JSON with any secret replaced by "REDACTED", for
// logs and error messages.
func (c Config) String() string {
	b, err := json.Marshal(c.redacted())
	if err != nil {
		return fmt.Sprintf("<dispatch config: %v>", err)
	}
	return string(b)
}

// LogValue makes slog print c as String does, so secrets stay out of logs.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func (c Config) redacted() Config {
	if c.Secret != "" {
		c.Secret = "REDACTED"
	}
	if c.URL != "" {
		c.URL = redactURL(c.URL)
	}
	if c.Targets != nil {
		targets := make([]Config, len(c.Targets))
		for i, t := range c.Targets {
			targets[i] = t.redacted()
		}
		c.Targets = targets
	}
	return c
}

func formatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// configError is fieldError for a whole config value, not one field.
func configError(path, format string, args ...any) *bus.Error {
	where := ""
	if path != "" {
		where = " " + path
	}
	return bus.Errorf(bus.ReasonInvalidRequest, "dispatch config%s %s", where, fmt.Sprintf(format, args...))
}

// firstWord names the JSON value data starts with, for error messages.
func firstWord(data []byte) string {
	switch data[0] {
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	return "not JSON"
}

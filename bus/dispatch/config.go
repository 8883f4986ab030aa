package dispatch

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// Kind names the sort of target a Config sends signals to. Kinds are part
// of the stored format: new ones may be added, existing ones never renamed.
type Kind string

// The kinds of target.
const (
	KindNATS    Kind = "nats"    // publish on a NATS subject
	KindWebhook Kind = "webhook" // POST to an HTTP endpoint
	KindLog     Kind = "log"     // write a record to the logger
	KindNoop    Kind = "noop"    // drop the signal on purpose
)

// Content modes of a nats target (Config.Mode).
const (
	ModeBinary     = "binary"
	ModeStructured = "structured"
)

// Defaults of a webhook target, used where the Config leaves a field zero.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 5
	DefaultBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
)

// Bounds that keep a stored config from asking for something absurd (and
// the backoff arithmetic far from overflow).
const (
	maxAttemptsLimit = 100
	maxTimeout       = 10 * time.Minute
	maxBackoffLimit  = time.Hour
)

// Config says where emitted signals go. It is plain data: it is stored in
// the event log inside Emit directives and read back from JSON (see the
// package doc for the JSON forms), so it holds no connections or functions.
//
// A Config is either one target, chosen by Kind, with the fields of that
// kind, or a list of targets in Targets (and nothing else). Fields that do
// not belong to the Kind must be zero. The zero Config is a nats target on
// the default emit subject in binary mode.
type Config struct {
	// Kind selects the target; empty means KindNATS.
	Kind Kind

	// Targets, when not nil, makes this Config a list: a signal goes to
	// every target in it. Kind and all other fields must then be zero. An
	// empty, non-nil list is invalid; use KindNoop to dispatch nowhere.
	Targets []Config

	// Subject (nats) is a literal NATS subject to publish on. Empty means
	// bus.Subjects.Emit(agent id, signal type), e.g. jido.emit.c1.counter.changed.
	Subject string
	// Mode (nats) is ModeBinary (the default when empty) or ModeStructured.
	Mode string

	// URL (webhook, required) is the absolute http or https endpoint. It
	// must match the node's webhook policy (see WebhookPolicy), which New
	// and Admit check.
	URL string
	// Secret (webhook) is the HMAC-SHA256 key of the Jido-Signature
	// header, written in the config itself. It is refused by the webhook
	// policy (New and Admit fail with bus.ReasonForbidden), since a config
	// is stored in the event log and logged; it is still read, so that an
	// agent stored with one recovers, and its deliveries fail saying what
	// to do.
	Secret string
	// SecretEnv (webhook) names the environment variable that holds the
	// secret, read when the Dispatcher is built: only the name is stored.
	// The policy admits only names with the SecretEnvPrefix (JIDO_SECRET_).
	// A webhook has Secret or SecretEnv, not both.
	SecretEnv string
	// Headers (webhook) are extra request headers. They may not replace
	// Content-Type, Content-Length, the signature headers or any ce-
	// header (Validate refuses them), and the policy refuses
	// Authorization, Cookie, Host, Proxy-* and the hop-by-hop headers,
	// in any spelling.
	Headers map[string]string
	// Timeout (webhook) bounds one attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts (webhook) bounds the attempts, the first included; zero
	// means DefaultMaxAttempts, 1 means no retry.
	MaxAttempts int
	// Backoff (webhook) is the delay before the first retry, doubled for
	// each later one; zero means DefaultBackoff.
	Backoff time.Duration
	// MaxBackoff (webhook) caps the delay between attempts; zero means
	// DefaultMaxBackoff. A Retry-After longer than this ends the retries.
	MaxBackoff time.Duration

	// Level (log) is the slog level of the record: "debug", "info", "warn"
	// or "error" (slog's text form, so "info+2" works too); empty means info.
	Level string
}

// Validate reports whether c is complete and consistent. The error is an
// *bus.Error of type bus.ReasonInvalidRequest whose message names the field
// (with its position for list elements, "[1].url").
func (c Config) Validate() error { return c.validate("") }

func (c Config) validate(path string) error {
	if c.Targets != nil {
		return c.validateList(path)
	}
	if err := c.checkFieldsBelong(path); err != nil {
		return err
	}
	switch c.kind() {
	case KindNATS:
		if c.Subject != "" {
			if err := validateSubject(c.Subject); err != nil {
				return fieldError(path, "subject", "%v", err)
			}
		}
		if _, err := parseMode(c.Mode); err != nil {
			return fieldError(path, "mode", "%v", err)
		}
	case KindWebhook:
		return c.validateWebhook(path)
	case KindLog:
		if _, err := parseLevel(c.Level); err != nil {
			return fieldError(path, "level", "%v", err)
		}
	case KindNoop:
	default:
		return fieldError(path, "kind", "unknown kind %q; want nats, webhook, log or noop", c.Kind)
	}
	return nil
}

func (c Config) validateList(path string) error {
	if c.Kind != "" {
		return fieldError(path, "kind", "a list of targets has no kind; give each element its own")
	}
	for _, f := range c.fieldUses() {
		if f.set {
			return fieldError(path, f.name, "a list of targets has no fields of its own; put them in its elements")
		}
	}
	if len(c.Targets) == 0 {
		return fieldError(path, "targets", "the list is empty; use \"noop\" to dispatch nowhere")
	}
	for i, t := range c.Targets {
		if err := t.validate(fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func (c Config) validateWebhook(path string) error {
	if c.URL == "" {
		return fieldError(path, "url", "is required for a webhook")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldError(path, "url", "%q is not an absolute http or https URL", redactURL(c.URL))
	}
	switch {
	case c.Secret == "" && c.SecretEnv == "":
		return fieldError(path, "secret_env", "is required for a webhook: the name of the node's environment variable (prefix %s) that holds the key receivers check the Jido-Signature header with", SecretEnvPrefix)
	case c.Secret != "" && c.SecretEnv != "":
		return fieldError(path, "secret_env", "and secret are both set; give secret_env only (an inline secret would be stored in the event log)")
	}
	seen := make(map[string]string, len(c.Headers))
	for name, value := range c.Headers {
		if err := validateHeader(name, value); err != nil {
			return fieldError(path, "headers", "%v", err)
		}
		// HTTP names ignore case: two spellings of one name would leave
		// which value is sent to map order.
		lower := strings.ToLower(name)
		if other, dup := seen[lower]; dup {
			return fieldError(path, "headers", "%q and %q are the same header", min(name, other), max(name, other))
		}
		seen[lower] = name
	}
	switch {
	case c.Timeout < 0 || c.Timeout > maxTimeout:
		return fieldError(path, "timeout", "%s is outside 0..%s (0 means %s)", c.Timeout, maxTimeout, DefaultTimeout)
	case c.MaxAttempts < 0 || c.MaxAttempts > maxAttemptsLimit:
		return fieldError(path, "max_attempts", "%d is outside 0..%d (0 means %d)", c.MaxAttempts, maxAttemptsLimit, DefaultMaxAttempts)
	case c.Backoff < 0 || c.Backoff > maxBackoffLimit:
		return fieldError(path, "backoff", "%s is outside 0..%s (0 means %s)", c.Backoff, maxBackoffLimit, DefaultBackoff)
	case c.MaxBackoff < 0 || c.MaxBackoff > maxBackoffLimit:
		return fieldError(path, "max_backoff", "%s is outside 0..%s (0 means %s)", c.MaxBackoff, maxBackoffLimit, DefaultMaxBackoff)
	}
	if w := c.webhookSettings(); w.backoff > w.maxBackoff {
		return fieldError(path, "max_backoff", "%s is less than backoff %s", w.maxBackoff, w.backoff)
	}
	return nil
}

// kind returns c.Kind with the empty kind read as KindNATS.
func (c Config) kind() Kind {
	if c.Kind == "" {
		return KindNATS
	}
	return c.Kind
}

// fieldUse describes one field of Config for the check that fields belong
// to their kind. The names are the JSON names, which error messages use.
type fieldUse struct {
	name string
	set  bool
	kind Kind
}

func (c Config) fieldUses() []fieldUse {
	return []fieldUse{
		{"subject", c.Subject != "", KindNATS},
		{"mode", c.Mode != "", KindNATS},
		{"url", c.URL != "", KindWebhook},
		{"secret", c.Secret != "", KindWebhook},
		{"secret_env", c.SecretEnv != "", KindWebhook},
		{"headers", c.Headers != nil, KindWebhook},
		{"timeout", c.Timeout != 0, KindWebhook},
		{"max_attempts", c.MaxAttempts != 0, KindWebhook},
		{"backoff", c.Backoff != 0, KindWebhook},
		{"max_backoff", c.MaxBackoff != 0, KindWebhook},
		{"level", c.Level != "", KindLog},
	}
}

func (c Config) checkFieldsBelong(path string) error {
	for _, f := range c.fieldUses() {
		if f.set && f.kind != c.kind() {
			hint := ""
			if c.Kind == "" {
				hint = " (a config without \"kind\" is a nats target)"
			}
			return fieldError(path, f.name, "belongs to kind %s, not %s%s", f.kind, c.kind(), hint)
		}
	}
	return nil
}

func fieldError(path, field, format string, args ...any) *bus.Error {
	where := field
	if path != "" {
		where = path + "." + field
	}
	return bus.Errorf(bus.ReasonInvalidRequest, "dispatch config %s: %s", where, fmt.Sprintf(format, args...))
}

func parseMode(m string) (codec.Mode, error) {
	switch m {
	case "", ModeBinary:
		return codec.Binary, nil
	case ModeStructured:
		return codec.Structured, nil
	}
	return 0, fmt.Errorf("%q is not a mode; want %q or %q", m, ModeBinary, ModeStructured)
}

func parseLevel(s string) (slog.Level, error) {
	if s == "" {
		return slog.LevelInfo, nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("%q is not a level; want debug, info, warn or error", s)
	}
	return l, nil
}

// validateSubject accepts literal NATS subjects only: publishing to a
// wildcard or a malformed subject is an error the server reports
// asynchronously, long after Dispatch has returned success.
func validateSubject(s string) error {
	for i, tok := range strings.Split(s, ".") {
		if tok == "" {
			return fmt.Errorf("%q has an empty token at position %d", s, i)
		}
		if tok == "*" || tok == ">" {
			return fmt.Errorf("%q has the wildcard %q; a target subject must be literal", s, tok)
		}
		for j := 0; j < len(tok); j++ {
			if c := tok[j]; c <= ' ' || c == 0x7f {
				return fmt.Errorf("%q contains whitespace or a control byte", s)
			}
		}
	}
	return nil
}

// isReservedHeader reports whether the lower-case header name is one the
// webhook writes itself, which a configured header may not replace.
func isReservedHeader(lower string) bool {
	switch lower {
	case "content-type", "content-length", "jido-timestamp", "jido-signature":
		return true
	}
	return strings.HasPrefix(lower, "ce-")
}

func validateHeader(name, value string) error {
	if name == "" {
		return fmt.Errorf("a header name is empty")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenByte(name[i]) {
			return fmt.Errorf("header name %q is not an HTTP token", name)
		}
	}
	lower := strings.ToLower(name)
	if isReservedHeader(lower) {
		return fmt.Errorf("header %q is written by the dispatcher and cannot be set", name)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("header %q: the value contains a control byte", name)
		}
	}
	return nil
}

// isTokenByte reports whether c may appear in an HTTP field name (RFC 9110 tchar).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// redactURL hides a URL's user info, name and password both, so a URL can
// go into error messages and logs: a name alone is often the credential
// (https://TOKEN@host/), and url.URL.Redacted would show it.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// webhookConfig is a webhook Config with its defaults applied.
type webhookConfig struct {
	timeout, backoff, maxBackoff time.Duration
	maxAttempts                  int
}

func (c Config) webhookSettings() webhookConfig {
	w := webhookConfig{timeout: c.Timeout, backoff: c.Backoff, maxBackoff: c.MaxBackoff, maxAttempts: c.MaxAttempts}
	if w.timeout == 0 {
		w.timeout = DefaultTimeout
	}
	if w.backoff == 0 {
		w.backoff = DefaultBackoff
	}
	if w.maxBackoff == 0 {
		w.maxBackoff = DefaultMaxBackoff
	}
	if w.maxAttempts == 0 {
		w.maxAttempts = DefaultMaxAttempts
	}
	return w
}

// Package secrets is what a node knows of its own secrets: the credentials
// it was started with (JIDO_PASSWORD, JIDO_TOKEN, the HTTP tokens), the
// model providers' keys and the webhook signing secrets (JIDO_SECRET_*).
// It is the one place that decides which variables of the node's
// environment never reach a command, whatever a project's policy or the
// operator lists, and which values are scrubbed from the text a provider
// call returns (a server that echoes the key in its error must not put it
// in the log).
package secrets

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/bus/dispatch"
)

// MinScrubLen is the shortest secret value scrubbed from text: replacing
// every "ab" of a message would garble it and hide nothing worth hiding
// (a secret that short is guessed anyway). A variable holding a shorter
// secret is still never passed to a command.
const MinScrubLen = 4

// minContainedLen is the shortest secret whose presence inside another
// variable's value (a URL with the token in it) keeps that variable from
// a command; a shorter one only matches a value equal to it, so that a
// password "bin" does not take PATH away.
const minContainedLen = 8

// Value is a secret the node holds, with a label that says which it is
// where it is scrubbed from text ("$OPENAI_API_KEY", "--password").
type Value struct {
	Label  string
	Secret string
}

// Set is the node's secrets. The zero value and nil hold none. A Set is
// immutable and safe for concurrent use.
type Set struct {
	names    map[string]bool
	values   []Value  // each secret once, as given
	forms    []string // every form scrubbed, longest first
	replacer *strings.Replacer
}

// New returns the secrets named by names (variables of environ, NAME=VALUE;
// each name is a secret's whether or not it is set), every variable of
// environ whose name starts with dispatch.SecretEnvPrefix (the webhook
// signing secrets), and values.
func New(environ []string, names []string, values ...Value) *Set {
	known := map[string]bool{}
	for _, n := range names {
		if n != "" {
			known[n] = true
		}
	}
	var vals []Value
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if strings.HasPrefix(k, dispatch.SecretEnvPrefix) {
			known[k] = true
		}
		if known[k] {
			vals = append(vals, Value{Label: "$" + k, Secret: v})
		}
	}
	return build(known, append(vals, values...))
}

// With returns a Set holding s's secrets and values too: a provider's key
// as it was read, so that it is scrubbed whatever s was built from.
func (s *Set) With(values ...Value) *Set {
	if s == nil {
		return build(nil, values)
	}
	return build(s.names, append(slices.Clone(s.values), values...))
}

func build(names map[string]bool, values []Value) *Set {
	s := &Set{names: map[string]bool{}}
	for n := range names {
		s.names[n] = true
	}
	type pair struct{ form, label string }
	var pairs []pair
	seen := map[string]bool{}
	for _, v := range values {
		if v.Secret == "" || slices.ContainsFunc(s.values, func(o Value) bool { return o.Secret == v.Secret }) {
			continue
		}
		s.values = append(s.values, v)
		if len(v.Secret) < MinScrubLen {
			continue
		}
		for _, f := range forms(v.Secret) {
			if !seen[f] {
				seen[f] = true
				pairs = append(pairs, pair{f, v.Label})
			}
		}
	}
	// Longest first: at a given position strings.Replacer takes the first
	// pattern that matches, so a secret is never half replaced by a
	// shorter one it begins with.
	slices.SortStableFunc(pairs, func(a, b pair) int { return len(b.form) - len(a.form) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.form, "[redacted "+p.label+"]")
		s.forms = append(s.forms, p.form)
	}
	if len(args) > 0 {
		s.replacer = strings.NewReplacer(args...)
	}
	return s
}

// forms are the spellings of secret a server may echo: the value itself
// (which also covers "Bearer <value>" and a value inside a longer text),
// its base64 in the standard and URL alphabets, whole and as it reads
// inside a longer encoded text (see base64Inside: "Bearer <value>" or
// "user:<value>" encoded, as a Basic credential is), and its percent- and
// JSON-escaped forms (echoed in a URL, or in a JSON body quoted as text).
func forms(secret string) []string {
	b := []byte(secret)
	j, _ := json.Marshal(secret) // <, > and & as \u003c…, as Go writes JSON
	var plain strings.Builder    // and as written elsewhere
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(secret)
	p := strings.TrimSuffix(plain.String(), "\n")
	out := []string{
		secret,
		base64.StdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		url.QueryEscape(secret),
		url.PathEscape(secret),
		string(j[1 : len(j)-1]),
		p[1 : len(p)-1],
	}
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, base64Inside(e, b)...)
	}
	return out
}

// minInside is the shortest base64 run kept as a form: shorter runs of a
// short secret would match unrelated base64 text.
const minInside = 8

// base64Inside returns the base64 of secret as it reads inside the
// encoding of a longer text, at each of the three offsets it may start
// at: the characters that encode the secret's bits alone, without the
// one or two at each end that share bits with its neighbours. A text
// that holds the secret, encoded, holds one of them.
func base64Inside(e *base64.Encoding, secret []byte) []string {
	var out []string
	for k := range 3 {
		enc := e.EncodeToString(append(make([]byte, k), secret...))
		from := (8*k + 5) / 6           // the first character made of the secret's bits only
		to := 8 * (k + len(secret)) / 6 // past the last such character
		if to-from >= minInside {
			out = append(out, enc[from:to])
		}
	}
	return out
}

// Named reports whether name is a variable holding one of the node's
// secrets (set or not).
func (s *Set) Named(name string) bool {
	return s != nil && s.names[name]
}

// Names returns the variables known to hold the node's secrets, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.names))
	for n := range s.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Holds reports whether the variable name=value would hand one of the
// node's secrets to whoever gets it: it is named as a secret's, or its
// value is a secret, or holds one (a secret of minContainedLen bytes or
// more: a URL with the token in it).
func (s *Set) Holds(name, value string) bool {
	if s == nil {
		return false
	}
	if s.names[name] {
		return true
	}
	for _, v := range s.values {
		if value == v.Secret || len(v.Secret) >= minContainedLen && strings.Contains(value, v.Secret) {
			return true
		}
	}
	return false
}

// Scrub returns text with every secret of MinScrubLen bytes or more, in
// any of the forms a server may echo, replaced by "[redacted LABEL]".
func (s *Set) Scrub(text string) string {
	if s == nil || s.replacer == nil {
		return text
	}
	return s.replacer.Replace(text)
}

// Pending returns how many bytes at the end of text might be the start of
// a secret cut by the end of a streamed piece: a stream holds them back
// until the next piece tells, then scrubs. The count ends on a UTF-8
// boundary, so what is sent before it is whole characters.
func (s *Set) Pending(text string) int {
	if s == nil {
		return 0
	}
	hold := 0
	for _, f := range s.forms {
		for k := min(len(f)-1, len(text)); k > hold; k-- {
			if strings.HasSuffix(text, f[:k]) {
				hold = k
				break
			}
		}
	}
	for hold > 0 && hold < len(text) && !utf8.RuneStart(text[len(text)-hold]) {
		hold++
	}
	return hold
}

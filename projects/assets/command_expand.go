package assets

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrMissingArgument is wrapped by Expand when the body names a
// {{name}} the call did not give.
var ErrMissingArgument = errors.New("missing command argument")

// Expansion is a command body filled from call arguments.
type Expansion struct {
	// Text is the body with $ARGUMENTS, $1…$9 and {{name}} replaced.
	Text string `json:"text"`
	// Includes are the @path references of the body, in order, each
	// once, with placeholders inside them expanded ("@$1" → the first
	// argument). They are NOT read here: the caller reads each through
	// the project's policy, like any other file a tool reads, and a path
	// the policy refuses is refused there. Text keeps the @path as
	// written so the caller decides how to splice the contents in.
	Includes []string `json:"includes,omitempty"`
}

// Expand fills the body in one pass over the body as written:
//   - $ARGUMENTS is every positional argument joined with single spaces;
//   - $1 … $9 are the positional arguments (empty when not given; "$10"
//     is $1 followed by "0");
//   - {{name}} and {{ name }} are named arguments (name: letters, digits,
//     '_' and '-'); one not given is an error naming it, since silently
//     empty text would send a model a half-written prompt;
//   - @path, at the start of the body or after a blank or '(', is an
//     include (see Expansion.Includes); trailing punctuation is not part
//     of the path.
//
// Substituted values are never scanned again, so an argument holding
// "$1", "{{x}}" or "@/etc/passwd" is plain text, not a placeholder or an
// include. Anything else ("$", "$X", "{{not a name}}") is left as is.
func (c *Command) Expand(positional []string, named map[string]string) (Expansion, error) {
	var missing []string
	x := expander{pos: positional, named: named, missing: map[string]bool{}}
	var b strings.Builder
	var includes []string
	seen := map[string]bool{}
	body := c.Body
	for i := 0; i < len(body); {
		if body[i] == '@' && (i == 0 || strings.ContainsRune(" \t\r\n(", rune(body[i-1]))) {
			end := i + 1
			for end < len(body) && !strings.ContainsRune(" \t\r\n", rune(body[end])) {
				end++
			}
			tok := body[i+1 : end]
			path := strings.TrimRight(tok, ".,;:!?)]'\"`")
			if path != "" {
				expanded := x.expand(path)
				b.WriteByte('@')
				b.WriteString(expanded)
				b.WriteString(tok[len(path):])
				if expanded != "" && !seen[expanded] {
					seen[expanded] = true
					includes = append(includes, expanded)
				}
				i = end
				continue
			}
		}
		n := x.one(body[i:], &b)
		i += n
	}
	for name := range x.missing {
		missing = append(missing, name)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return Expansion{}, fmt.Errorf("command %s: %w %q: pass it as a named argument {%q: \"...\"}", c.Name, ErrMissingArgument, strings.Join(missing, `", "`), missing[0])
	}
	return Expansion{Text: b.String(), Includes: includes}, nil
}

type expander struct {
	pos     []string
	named   map[string]string
	missing map[string]bool
	// positional is set once a $ARGUMENTS or $1…$9 was met.
	positional bool
}

// Arguments are what the command's body takes, by Expand's rules: the
// names of its {{name}} placeholders (each required), sorted, and whether
// it uses positional arguments ($ARGUMENTS, $1…$9), includes' paths
// counted. Its tool's input schema and its MCP prompt declare them.
func (c *Command) Arguments() (named []string, positional bool) {
	x := expander{missing: map[string]bool{}}
	x.expand(c.Body)
	for n := range x.missing {
		named = append(named, n)
	}
	sort.Strings(named)
	return named, x.positional
}

// expand fills placeholders in s (no includes: s is an include's path).
func (x *expander) expand(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		i += x.one(s[i:], &b)
	}
	return b.String()
}

// one writes the expansion of the placeholder at the start of s, or its
// first byte when there is none, and returns how many bytes it consumed.
func (x *expander) one(s string, b *strings.Builder) int {
	switch {
	case strings.HasPrefix(s, "$ARGUMENTS"):
		x.positional = true
		b.WriteString(strings.Join(x.pos, " "))
		return len("$ARGUMENTS")
	case len(s) >= 2 && s[0] == '$' && s[1] >= '1' && s[1] <= '9':
		x.positional = true
		if n := int(s[1] - '0'); n <= len(x.pos) {
			b.WriteString(x.pos[n-1])
		}
		return 2
	case strings.HasPrefix(s, "{{"):
		if end := strings.Index(s, "}}"); end > 0 {
			name := strings.TrimSpace(s[2:end])
			if argName(name) {
				if v, ok := x.named[name]; ok {
					b.WriteString(v)
				} else {
					x.missing[name] = true
				}
				return end + 2
			}
		}
	}
	b.WriteByte(s[0])
	return 1
}

func argName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

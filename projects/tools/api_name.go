package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// MaxAPIName is the longest tool name the LLM tool-use APIs accept
// (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$).
const MaxAPIName = 64

// apiHashLen is how many hex digits of a name's SHA-256 an API name
// carries when the plain translation is too long or taken.
const apiHashLen = 10

// apiNames gives every tool of a catalog its API name, a name the LLM
// tool-use APIs accept, and refuses a catalog where two tools would share
// one. The mapping depends only on the set of names, never on their order:
//
//   - a name already of the API alphabet and at most MaxAPIName bytes is
//     its own API name (read_file stays read_file);
//   - any other name has '.' turned into '_' and ':' into '-'
//     (command.git:commit → command_git-commit) when that is at most
//     MaxAPIName bytes and no other tool of the catalog has or translates
//     to it;
//   - otherwise it is the translation cut to leave room for "_" and
//     apiHashLen hex digits of the name's SHA-256.
func apiNames(names []string) (toAPI, fromAPI map[string]string, err error) {
	toAPI = make(map[string]string, len(names))
	fromAPI = make(map[string]string, len(names))
	var rest []string
	for _, n := range names {
		if isAPIName(n) {
			toAPI[n], fromAPI[n] = n, n
		} else {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	plain := make(map[string][]string, len(rest)) // translation → names
	for _, n := range rest {
		t := translate(n)
		plain[t] = append(plain[t], n)
	}
	for _, n := range rest {
		t := translate(n)
		if _, taken := fromAPI[t]; len(t) > MaxAPIName || taken || len(plain[t]) > 1 {
			sum := sha256.Sum256([]byte(n))
			t = t[:min(len(t), MaxAPIName-1-apiHashLen)] + "_" + hex.EncodeToString(sum[:])[:apiHashLen]
		}
		if other, taken := fromAPI[t]; taken {
			return nil, nil, fmt.Errorf("tools %s and %s: both would be %q for an LLM API; rename one", other, n, t)
		}
		toAPI[n], fromAPI[t] = t, n
	}
	return toAPI, fromAPI, nil
}

func isAPIName(s string) bool {
	if len(s) == 0 || len(s) > MaxAPIName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

// translate maps a catalog name (validName's alphabet) into the API
// alphabet.
func translate(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch c {
		case '.':
			b[i] = '_'
		case ':':
			b[i] = '-'
		}
	}
	return string(b)
}

// APIName is the name tool name goes by in an LLM tool-use API: see List.
func (c *Catalog) APIName(name string) (string, bool) {
	a, ok := c.toAPI[name]
	return a, ok
}

// Lookup is the catalog name of the tool an LLM called by apiName (the
// inverse of APIName). A catalog name that is its own API name is found
// too; any other name is not.
func (c *Catalog) Lookup(apiName string) (string, bool) {
	n, ok := c.fromAPI[apiName]
	return n, ok
}

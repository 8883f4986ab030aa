package frontdoor

import (
	"crypto/sha256"
	"crypto/subtle"
	"slices"
	"sort"
	"strings"
)

// credential is one configured token, kept as its digest: comparing
// digests of equal length in constant time says nothing of how much of a
// guess was right.
type credential struct {
	digest  [sha256.Size]byte
	name    string
	project string // "" admits every path
	admin   bool
}

type keyring []credential

// anonymous is the caller's name where no token is configured.
const anonymous = "anonymous"

func newKeyring(o Options) keyring {
	var k keyring
	for tok, name := range o.Tokens {
		k = append(k, credential{digest: sha256.Sum256([]byte(tok)), name: name, admin: slices.Contains(o.Admins, name)})
	}
	for p, m := range o.ProjectTokens {
		for tok, name := range m {
			k = append(k, credential{digest: sha256.Sum256([]byte(tok)), name: name, project: p})
		}
	}
	return k
}

// match returns the name of token, whether it is an admin's, and the
// projects it is limited to (none: every path). It compares token with
// every credential, never stopping at the first that matches, so that
// timing tells nothing.
func (k keyring) match(token string) (name string, admin bool, projects []string, ok bool) {
	d := sha256.Sum256([]byte(token))
	global := false
	for _, c := range k {
		if subtle.ConstantTimeCompare(d[:], c.digest[:]) != 1 {
			continue
		}
		ok, name = true, c.name
		admin = admin || c.admin
		if c.project == "" {
			global = true
		} else {
			projects = append(projects, c.project)
		}
	}
	if global {
		projects = nil
	}
	sort.Strings(projects)
	return name, admin, projects, ok
}

// bearerToken returns the token of an Authorization header
// "Bearer <token>" (the scheme in any case, RFC 6750), or "" and false.
func bearerToken(header string) (string, bool) {
	scheme, token, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// projectOf returns the project a path names: /mcp/{project}[/…] or
// /a2a/{project}[/…]; "" for every other path (/mcp itself names all).
func projectOf(path string) string {
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(segs) < 2 || (segs[0] != "mcp" && segs[0] != "a2a") {
		return ""
	}
	return segs[1]
}

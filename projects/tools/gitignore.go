package tools

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// No library in the pinned set matches .gitignore files, so grep uses this
// implementation of the documented format (gitignore(5)):
//   - blank lines and lines starting with '#' are skipped; "\#" and "\!"
//     start a pattern with a literal '#' or '!';
//   - trailing blanks are dropped unless escaped with '\';
//   - '!' negates: a path a later negated pattern matches is kept again,
//     except below a directory already excluded (the walk never enters it);
//   - a trailing '/' matches directories only;
//   - a pattern with a '/' at its start or middle is anchored to the folder
//     of its .gitignore; any other matches a name at any depth below it;
//   - '*', '?', '[…]' and '**' ("**/x", "x/**", "a/**/b") as git has them;
//     '{' and '}' are literal, as in git;
//   - the last matching pattern wins, and a deeper .gitignore's patterns
//     come after a shallower one's.
//
// Not supported: .git/info/exclude, core.excludesFile (the user's global
// ignores) and .gitignore files above the walk's starting folder's tree
// other than the root's.

type ignoreRule struct {
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool
}

// ignoreSet is one .gitignore: its folder relative to the root ("." for
// the root) and its rules in file order.
type ignoreSet struct {
	base  string
	rules []ignoreRule
}

func parseGitignore(base string, data []byte) ignoreSet {
	set := ignoreSet{base: base}
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		line = trimTrailingBlanks(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		switch {
		case line[0] == '!':
			r.negate, line = true, line[1:]
		case strings.HasPrefix(line, `\#`), strings.HasPrefix(line, `\!`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		r.anchored = strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		// Braces are doublestar alternatives but literal to git.
		line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
		if !doublestar.ValidatePattern(line) {
			continue // git ignores a pattern it cannot use; so do we
		}
		r.pattern = line
		set.rules = append(set.rules, r)
	}
	return set
}

// trimTrailingBlanks drops trailing spaces and tabs not escaped with '\'.
func trimTrailingBlanks(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		if len(s) >= 2 && s[len(s)-2] == '\\' {
			return s[:len(s)-2] + s[len(s)-1:]
		}
		s = s[:len(s)-1]
	}
	return s
}

// ignorer holds the .gitignore sets of the folders from the root down to
// the one a walk is in, shallowest first.
type ignorer struct{ sets []ignoreSet }

// enter drops the sets of folders the walk has left (rel is the path it
// is at now): a depth-first walk leaves a folder for good.
func (ig *ignorer) enter(rel string) {
	for len(ig.sets) > 0 && !within(ig.sets[len(ig.sets)-1].base, rel) {
		ig.sets = ig.sets[:len(ig.sets)-1]
	}
}

func (ig *ignorer) push(s ignoreSet) {
	if len(s.rules) > 0 {
		ig.sets = append(ig.sets, s)
	}
}

// ignored reports whether rel (relative to the root) is ignored.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	ignored := false
	for _, s := range ig.sets {
		if !within(s.base, rel) || s.base == rel {
			continue
		}
		sub := rel
		if s.base != "." {
			sub = rel[len(s.base)+1:]
		}
		name := path.Base(sub)
		for _, r := range s.rules {
			if r.dirOnly && !isDir {
				continue
			}
			target := name
			if r.anchored {
				target = sub
			}
			if ok, _ := doublestar.Match(r.pattern, target); ok {
				ignored = !r.negate
			}
		}
	}
	return ignored
}

// within reports whether rel is base or below it.
func within(base, rel string) bool {
	return base == "." || rel == base || strings.HasPrefix(rel, base+"/")
}

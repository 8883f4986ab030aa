package tools

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

type grepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type grepOutput struct {
	Matches       []grepMatch `json:"matches"`
	FilesSearched int         `json:"files_searched"`
	FilesSkipped  int         `json:"files_skipped"` // binary or too large
	Truncated     bool        `json:"truncated"`
}

// grepLineMax is the longest line text grep returns; longer lines are cut.
const grepLineMax = 500

// binarySniff is how much of a file is looked at for a NUL byte, git's rule
// for telling binary from text.
const binarySniff = 8000

func grepTool(l Limits) Tool {
	return Tool{
		Name: "grep",
		Description: fmt.Sprintf("Search the project's text files for a regular expression (RE2 syntax, matched per line). "+
			"Honours .gitignore files and skips .git, binary files and files over %d bytes. At most %d matching lines "+
			"and %d bytes of them; lines are cut at %d bytes.", l.MaxGrepFileBytes, l.MaxMatches, l.MaxGrepBytes, grepLineMax),
		InputSchema: []byte(`{"type":"object","properties":{
			"pattern":{"type":"string","minLength":1,"description":"RE2 regular expression, e.g. \"func \\\\w+Test\""},
			"path":{"type":"string","minLength":1,"description":"file or folder to search, relative to the root (default \".\")"},
			"glob":{"type":"string","minLength":1,"description":"only files whose path (or, without '/', name) matches, e.g. \"*.go\""},
			"case_insensitive":{"type":"boolean"},
			"max_matches":{"type":"integer","minimum":1}},
			"required":["pattern"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{
			"matches":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},
			"line":{"type":"integer"},"text":{"type":"string"}},"required":["path","line","text"]}},
			"files_searched":{"type":"integer"},"files_skipped":{"type":"integer"},"truncated":{"type":"boolean"}},
			"required":["matches","files_searched","files_skipped","truncated"]}`),
		Safety: Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Pattern         string `json:"pattern"`
				Path            string `json:"path"`
				Glob            string `json:"glob"`
				CaseInsensitive bool   `json:"case_insensitive"`
				MaxMatches      int    `json:"max_matches"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			expr := a.Pattern
			if a.CaseInsensitive {
				expr = "(?i)" + expr
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, Errorf(ReasonInvalidArgs, "grep: pattern %q is not an RE2 regular expression: %v", a.Pattern, err)
			}
			if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
				return nil, Errorf(ReasonInvalidArgs, "grep: glob %q is not a valid pattern (e.g. \"*.go\" or \"src/**/*.ts\")", a.Glob)
			}
			if a.Path == "" {
				a.Path = "."
			}
			g := grepper{c: c, l: l, re: re, glob: a.Glob, max: l.MaxMatches, out: grepOutput{Matches: []grepMatch{}}}
			if a.MaxMatches > 0 && a.MaxMatches < g.max {
				g.max = a.MaxMatches
			}
			// The root's .gitignore applies wherever the search starts.
			if data, err := c.Sandbox.ReadFile(c.Name, ".gitignore", gitignoreMax); err == nil {
				g.ig.push(parseGitignore(".", data))
			}
			err = c.Sandbox.WalkDir(c.Name, a.Path, func(rel string, d fs.DirEntry, err error) error {
				return g.visit(ctx, rel, d, err)
			})
			if err != nil {
				return nil, err
			}
			return g.out, nil
		},
	}
}

// gitignoreMax is the largest .gitignore read; a larger one is not used.
const gitignoreMax = 1 << 20

type grepper struct {
	c     *Call
	l     Limits
	re    *regexp.Regexp
	glob  string
	max   int
	bytes int
	ig    ignorer
	out   grepOutput
}

func (g *grepper) visit(ctx context.Context, rel string, d fs.DirEntry, err error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err != nil {
		g.c.Logf("skipped %s: %v", rel, err)
		return nil
	}
	g.ig.enter(rel)
	if d.IsDir() {
		if d.Name() == ".git" || rel != "." && g.ig.ignored(rel, true) {
			return fs.SkipDir
		}
		if rel != "." {
			if data, err := g.c.Sandbox.ReadFile(g.c.Name, rel+"/.gitignore", gitignoreMax); err == nil {
				g.ig.push(parseGitignore(rel, data))
			}
		}
		return nil
	}
	if !d.Type().IsRegular() || g.ig.ignored(rel, false) || !g.globMatch(rel) {
		return nil
	}
	if fi, err := d.Info(); err == nil && fi.Size() > g.l.MaxGrepFileBytes {
		g.out.FilesSkipped++
		return nil
	}
	data, err := g.c.Sandbox.ReadFile(g.c.Name, rel, g.l.MaxGrepFileBytes)
	if err != nil {
		g.out.FilesSkipped++
		g.c.Logf("skipped %s: %v", rel, err)
		return nil
	}
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		g.out.FilesSkipped++
		return nil
	}
	g.out.FilesSearched++
	if !g.re.Match(data) {
		return nil
	}
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if !g.re.Match(line) {
			continue
		}
		text := cutText(strings.TrimSuffix(string(line), "\r"), grepLineMax)
		if len(g.out.Matches) == g.max || g.bytes+len(text) > g.l.MaxGrepBytes {
			g.out.Truncated = true
			return fs.SkipAll
		}
		g.bytes += len(text)
		g.out.Matches = append(g.out.Matches, grepMatch{Path: rel, Line: n, Text: text})
	}
	return nil
}

func (g *grepper) globMatch(rel string) bool {
	if g.glob == "" {
		return true
	}
	target := rel
	if !strings.Contains(g.glob, "/") {
		target = path.Base(rel)
	}
	ok, _ := doublestar.Match(g.glob, target)
	return ok
}

// cutText cuts s to at most n bytes on a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

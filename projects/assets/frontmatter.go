package assets

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
)

// frontMatter is a markdown file cut in two: the YAML between a leading
// "---" line and the next "---" line, and the markdown body after it.
//
// Invariants: when present is false, yaml is nil, yamlLine is 0 and body
// is the whole input; when present is true, yamlLine is the 1-based line
// of the first YAML line (2: the line after the opening delimiter) and
// bodyLine the 1-based line where the body starts, so a loader can turn a
// position inside either part back into a line of the file.
type frontMatter struct {
	present  bool
	yaml     []byte
	yamlLine int
	body     []byte
	bodyLine int
}

// frontMatterError is a problem in a file's front matter with the 1-based
// line of the file it is on (0 when no line can be named).
type frontMatterError struct {
	Line   int
	Reason string
}

func (e *frontMatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return e.Reason
}

// utf8BOM is skipped before the opening delimiter: editors on Windows
// write it and it is not content.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// splitFrontMatter cuts data into front matter and body. Front matter is
// present only when the very first line (after an optional UTF-8 BOM) is
// "---" (trailing blanks and a CR allowed); it ends at the next line that
// is "---" the same way. An opening delimiter that is never closed is an
// error naming line 1, because treating the whole file as YAML or as body
// would both silently load something the author did not mean.
//
// splitFrontMatter never panics and never allocates more than the input:
// the returned slices alias data.
func splitFrontMatter(data []byte) (frontMatter, error) {
	rest := bytes.TrimPrefix(data, utf8BOM)
	first, after, ok := cutLine(rest)
	if !isDelimiter(first) {
		return frontMatter{body: data, bodyLine: 1}, nil
	}
	if !ok {
		return frontMatter{}, &frontMatterError{Line: 1, Reason: "front matter opened with --- is never closed: add a line --- after the YAML"}
	}
	yamlStart := after
	line := 2
	for len(after) > 0 {
		l, next, _ := cutLine(after)
		if isDelimiter(l) {
			yamlEnd := len(yamlStart) - len(after)
			return frontMatter{
				present:  true,
				yaml:     yamlStart[:yamlEnd:yamlEnd],
				yamlLine: 2,
				body:     next,
				bodyLine: line + 1,
			}, nil
		}
		after = next
		line++
	}
	return frontMatter{}, &frontMatterError{Line: 1, Reason: "front matter opened with --- is never closed: add a line --- after the YAML"}
}

// cutLine returns the first line of b without its "\n", the rest after
// it, and whether a "\n" was found.
func cutLine(b []byte) (line, rest []byte, found bool) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// decodeFrontMatter decodes the YAML of fm into v strictly: a key v does
// not declare, a duplicate key or a value of the wrong type is an error.
// A hint or a description YAML would not read as text is read as written
// first (quoteText).
// The error is a *frontMatterError whose Line is a line of the whole file
// (the YAML parser's line shifted by where the front matter starts) when
// the parser names one. Empty front matter leaves v untouched.
func decodeFrontMatter(fm frontMatter, v any) error {
	if len(bytes.TrimSpace(fm.yaml)) == 0 {
		return nil
	}
	err := yaml.UnmarshalWithOptions(quoteText(fm.yaml), v, yaml.DisallowUnknownField())
	if err == nil {
		return nil
	}
	var yerr yaml.Error
	if errors.As(err, &yerr) {
		line := 0
		if tk := yerr.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line > 0 {
			line = fm.yamlLine + tk.Position.Line - 1
		}
		return &frontMatterError{Line: line, Reason: "front matter: " + oneLine(yerr.GetMessage())}
	}
	return &frontMatterError{Reason: "front matter: " + oneLine(err.Error())}
}

// oneLine keeps the first line of a message: a Diagnostic is one line.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

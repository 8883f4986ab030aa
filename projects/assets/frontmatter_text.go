package assets

import (
	"bytes"
	"strconv"

	"github.com/goccy/go-yaml"
)

// textKeys are the front matter keys whose value is text for a person
// (a hint, a description), which other coding agents read as written:
// Claude Code's own examples write "argument-hint: [pr-number] [priority]",
// which YAML reads as a list or not at all. Such a value is taken as the
// text it shows.
var textKeys = [][]byte{[]byte("argument-hint"), []byte("description")}

// quoteText rewrites, in front matter y, each top-level line of a text key
// whose value YAML would not read as that text — a flow list ("[scope]"),
// a flow mapping, or something it cannot parse ("[a] [b]", "<x: y>") — as
// the same text double-quoted. Every other line is left as it is, and the
// line count is kept, so errors still name the file's lines. Quoted
// values, block scalars (| and >) and values YAML reads as a string, a
// number or a boolean are left to YAML.
func quoteText(y []byte) []byte {
	var out []byte
	changed := false
	for rest := y; len(rest) > 0; {
		line, next, newline := cutLine(rest)
		if q, ok := quotedTextLine(line); ok {
			line, changed = q, true
		}
		out = append(out, line...)
		if newline {
			out = append(out, '\n')
		}
		rest = next
	}
	if !changed {
		return y
	}
	return out
}

// quotedTextLine returns line rewritten with its value quoted, when line
// is "<text key>: <value>" at the top level and YAML would not read the
// value as text.
func quotedTextLine(line []byte) ([]byte, bool) {
	cr := bytes.HasSuffix(line, []byte("\r"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	var key []byte
	for _, k := range textKeys {
		if bytes.HasPrefix(line, k) && bytes.HasPrefix(line[len(k):], []byte(":")) {
			key = k
			break
		}
	}
	if key == nil {
		return nil, false
	}
	value := bytes.TrimSpace(line[len(key)+1:])
	if len(value) == 0 || bytes.IndexByte([]byte(`"'|>&*!`), value[0]) >= 0 {
		return nil, false
	}
	var v map[string]any
	if err := yaml.Unmarshal(line, &v); err == nil {
		switch v[string(key)].(type) {
		case []any, map[string]any:
		default:
			return nil, false
		}
	}
	q := append(append(append([]byte{}, key...), ": "...), strconv.Quote(string(value))...)
	if cr {
		q = append(q, '\r')
	}
	return q, true
}

package assets

import (
	"bytes"
	"errors"
)

// errNoFrontMatter and errUnclosedFrontMatter are the two ways a file that
// must start with front matter can fail to.
var (
	errNoFrontMatter       = errors.New("no front matter: the file must start with a line '---', the YAML front matter, and a closing '---'")
	errUnclosedFrontMatter = errors.New("front matter is not closed: add a line '---' after it")
)

// splitFrontMatter splits a markdown file into its YAML front matter and
// its body. The file must start with a line "---" (a UTF-8 byte order mark
// before it is allowed) and the front matter ends at the next line that is
// exactly "---" (or "..."), CRLF line ends included. frontLine and bodyLine
// are the 1-based file lines on which the front matter and the body start,
// so positions inside either can be reported against the file.
//
// This is a private copy: the shared splitter in frontmatter.go (PJ-ASSETS)
// should replace it when both land.
func splitFrontMatter(data []byte) (front []byte, frontLine int, body []byte, bodyLine int, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(bytes.TrimRight(first, "\r")) != "---" {
		return nil, 0, nil, 0, errNoFrontMatter
	}
	line := 2
	off := 0
	for off < len(rest) {
		end := bytes.IndexByte(rest[off:], '\n')
		var l []byte
		next := len(rest)
		if end >= 0 {
			l = rest[off : off+end]
			next = off + end + 1
		} else {
			l = rest[off:]
		}
		if t := string(bytes.TrimRight(l, "\r")); t == "---" || t == "..." {
			return rest[:off], 2, rest[next:], line + 1, nil
		}
		off = next
		line++
	}
	return nil, 0, nil, 0, errUnclosedFrontMatter
}

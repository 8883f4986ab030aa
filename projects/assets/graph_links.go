package assets

import "strings"

// Link is one wiki link in a note: [[Target]], [[Target|Alias]],
// [[Target#Heading]] or [[Target#Heading|Alias]]. Parts are trimmed and a
// trailing ".md" on the target is dropped. Line is 1-based.
type Link struct {
	Target  string
	Heading string
	Alias   string
	Line    int
}

// ParseLinks returns the wiki links in a note's text, in order. A link
// lies on one line; links inside fenced code blocks (``` or ~~~) and inline
// code spans (`…`) are text, not links, so a note can show the syntax. A
// link to a heading of the same note ([[#Heading]]) is not a link to
// another note and is left out. "[[]]" is returned with an empty target so
// the loader can report it.
func ParseLinks(text string) []Link {
	var links []Link
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		if m := fenceOpen.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case isFenceClose(line, fence):
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		links = appendLineLinks(links, line, i+1)
	}
	return links
}

func appendLineLinks(links []Link, line string, n int) []Link {
	for len(line) > 0 {
		tick := strings.IndexByte(line, '`')
		open := strings.Index(line, "[[")
		if open < 0 {
			return links
		}
		if tick >= 0 && tick < open {
			// Skip an inline code span: from this run of backticks to the
			// next run of the same length; unmatched, the backtick is text.
			run := tick
			for run < len(line) && line[run] == '`' {
				run++
			}
			ticks := line[tick:run]
			if end := strings.Index(line[run:], ticks); end >= 0 {
				line = line[run+end+len(ticks):]
			} else {
				line = line[run:]
			}
			continue
		}
		// "[[[a]]]" is the link a inside a bracket: start at the last '['
		// of the run.
		for open+2 < len(line) && line[open+2] == '[' {
			open++
		}
		close := strings.Index(line[open+2:], "]]")
		if close < 0 {
			return links
		}
		inner := line[open+2 : open+2+close]
		line = line[open+2+close+2:]
		if strings.ContainsAny(inner, "[]") {
			continue
		}
		if l, ok := splitLink(inner); ok {
			l.Line = n
			links = append(links, l)
		}
	}
	return links
}

func splitLink(inner string) (Link, bool) {
	var l Link
	target, alias, _ := strings.Cut(inner, "|")
	l.Alias = strings.TrimSpace(alias)
	target, heading, hasHeading := strings.Cut(target, "#")
	l.Heading = strings.TrimSpace(heading)
	l.Target = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(target), ".md"))
	if l.Target == "" && hasHeading {
		return l, false
	}
	return l, true
}

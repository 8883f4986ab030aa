package assets

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseLinks(t *testing.T) {
	cases := []struct{ in, want string }{
		{"[[a]]", "[{a   1}]"},
		{"x [[a|Alias]] y", "[{a  Alias 1}]"},
		{"[[a#Head|Alias]]", "[{a Head Alias 1}]"},
		{"[[ dir/a.md # H ]]", "[{dir/a H  1}]"},
		{"[[#local]]", "[]"},
		{"[[a]]\n\n[[b]]", "[{a   1} {b   3}]"},
		{"[[a\nb]]", "[]"},
		{"[[[a]]]", "[{a   1}]"},
		{"[[]]", "[{   1}]"},
		{"```\n[[in code]]\n```\n[[after]]", "[{after   4}]"},
		{"~~~md\n[[in code]]\n~~~\n", "[]"},
		{"a `[[code]]` [[real]]", "[{real   1}]"},
		{"unclosed [[a", "[]"},
	}
	for _, c := range cases {
		got := ParseLinks(c.in)
		if got == nil {
			got = []Link{}
		}
		if s := fmt.Sprint(got); s != c.want {
			t.Errorf("ParseLinks(%q) = %s; want %s", c.in, s, c.want)
		}
	}
}

func FuzzParseLinks(f *testing.F) {
	for _, s := range []string{"[[a]]", "[[a|b]]", "[[a#h|b]]", "```\n[[x]]\n```", "`[[x]]`", "[[[[", "]]]]", "[[\n]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		links := ParseLinks(s)
		lines := strings.Count(s, "\n") + 1
		for _, l := range links {
			if l.Line < 1 || l.Line > lines {
				t.Fatalf("link %+v outside the text's %d lines", l, lines)
			}
			for _, part := range []string{l.Target, l.Heading, l.Alias} {
				if strings.ContainsAny(part, "[]\n") || part != strings.TrimSpace(part) {
					t.Fatalf("link %+v has a part with brackets, a newline or padding", l)
				}
				if utf8.ValidString(s) && !utf8.ValidString(part) {
					t.Fatalf("link %+v split a rune", l)
				}
			}
			if strings.ContainsAny(l.Target, "|#") || strings.Contains(l.Heading, "|") {
				t.Fatalf("link %+v was not split", l)
			}
		}
	})
}

package assets

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

func TestSplitFrontMatter(t *testing.T) {
	cases := []struct {
		name, in   string
		present    bool
		yaml, body string
		bodyLine   int
		errLine    int
	}{
		{name: "none", in: "# title\nbody\n", body: "# title\nbody\n", bodyLine: 1},
		{name: "empty file", in: "", body: "", bodyLine: 1},
		{name: "plain", in: "---\na: 1\n---\nbody\n", present: true, yaml: "a: 1\n", body: "body\n", bodyLine: 4},
		{name: "crlf", in: "---\r\na: 1\r\n---\r\nbody\r\n", present: true, yaml: "a: 1\r\n", body: "body\r\n", bodyLine: 4},
		{name: "bom", in: "\xEF\xBB\xBF---\na: 1\n---\n", present: true, yaml: "a: 1\n", body: "", bodyLine: 4},
		{name: "empty front matter", in: "---\n---\nx", present: true, yaml: "", body: "x", bodyLine: 3},
		{name: "closing at eof", in: "---\na: 1\n---", present: true, yaml: "a: 1\n", body: "", bodyLine: 4},
		{name: "dashes later are body", in: "text\n---\na: 1\n---\n", body: "text\n---\na: 1\n---\n", bodyLine: 1},
		{name: "four dashes is not a delimiter", in: "----\na\n", body: "----\na\n", bodyLine: 1},
		{name: "never closed", in: "---\na: 1\nbody\n", errLine: 1},
		{name: "only opening", in: "---", errLine: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fm, err := splitFrontMatter([]byte(c.in))
			if c.errLine != 0 {
				var fe *frontMatterError
				if !errors.As(err, &fe) || fe.Line != c.errLine {
					t.Fatalf("err = %v, want a frontMatterError on line %d", err, c.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fm.present != c.present || string(fm.yaml) != c.yaml || string(fm.body) != c.body || fm.bodyLine != c.bodyLine {
				t.Fatalf("got present=%v yaml=%q body=%q bodyLine=%d", fm.present, fm.yaml, fm.body, fm.bodyLine)
			}
		})
	}
}

func TestDecodeFrontMatterNamesTheFileLine(t *testing.T) {
	var v struct {
		Name string `yaml:"name"`
	}
	fm, err := splitFrontMatter([]byte("---\nname: x\nbogus: 1\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = decodeFrontMatter(fm, &v)
	var fe *frontMatterError
	if !errors.As(err, &fe) || fe.Line != 3 {
		t.Fatalf("unknown key: err = %v, want line 3", err)
	}
	fm, _ = splitFrontMatter([]byte("---\nname: x\nlist: [a, b\n---\n"))
	if err := decodeFrontMatter(fm, &v); err == nil {
		t.Fatal("malformed YAML decoded without error")
	}
}

// FuzzSplitFrontMatter checks the splitter's invariants on any input: no
// panic, the parts are slices of the input in order, and a present front
// matter is followed by a delimiter line.
func FuzzSplitFrontMatter(f *testing.F) {
	for _, s := range []string{"", "---\n---\n", "---\na: 1\n---\nbody", "---", "---\r\n", "\xEF\xBB\xBF---\n---\n", "x\n---\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := splitFrontMatter(data)
		if err != nil {
			return
		}
		if !fm.present {
			if string(fm.body) != string(data) {
				t.Fatalf("no front matter but body %q != input %q", fm.body, data)
			}
			return
		}
		if len(fm.yaml)+len(fm.body) > len(data) {
			t.Fatalf("parts longer than the input")
		}
		if fm.bodyLine < 3 {
			t.Fatalf("bodyLine %d < 3 with front matter", fm.bodyLine)
		}
		var v map[string]any
		_ = decodeFrontMatter(fm, &v) // must not panic
		_ = utf8.Valid(fm.body)
	})
}

// FuzzQuoteText checks the text keys' quoting on any front matter: no
// panic, the same number of lines (errors keep naming the file's lines),
// and a front matter with no text key left as it is.
func FuzzQuoteText(f *testing.F) {
	for _, s := range []string{"argument-hint: [a] [b]\n", "description: x: y\r\nmodel: m\n", "argument-hint:\n", "argument-hint: '[x]'", "description: |\n  a\n", "\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := quoteText(data)
		if bytes.Count(out, []byte("\n")) != bytes.Count(data, []byte("\n")) {
			t.Fatalf("%q became %q: the lines moved", data, out)
		}
		if !bytes.Contains(data, []byte("argument-hint:")) && !bytes.Contains(data, []byte("description:")) && !bytes.Equal(out, data) {
			t.Fatalf("%q without a text key became %q", data, out)
		}
	})
}

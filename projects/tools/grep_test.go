package tools

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	f := newFixture(t, map[string]string{
		".gitignore":     "*.log\n/build/\n!keep.log\n# comment\n",
		"a.go":           "package a\nfunc Hello() {}\n",
		"app.log":        "func Hello in a log\n",
		"keep.log":       "func Hello kept\n",
		"build/out.go":   "func Hello() built\n",
		"sub/.gitignore": "gen/\n",
		"sub/b.go":       "// hello\nfunc Hello2() {}\n",
		"sub/gen/c.go":   "func Hello3() {}\n",
		"sub/build/d.go": "func Hello4() {}\n", // /build/ is anchored to the root
		".git/HEAD":      "func Hello in git\n",
		"bin.dat":        "func Hello\x00",
		"x/.env":         "func Hello secret\n",
	}, nil, Options{})
	var out grepOutput
	f.ok(t, "grep", map[string]any{"pattern": `func Hello\d?`}, &out)
	var got []string
	for _, m := range out.Matches {
		got = append(got, m.Path+":"+strconv.Itoa(m.Line))
	}
	want := []string{"a.go:2", "keep.log:1", "sub/b.go:2", "sub/build/d.go:1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("grep = %v, want %v", got, want)
	}
	if out.FilesSkipped != 1 {
		t.Fatalf("files skipped %d, want 1 (the binary)", out.FilesSkipped)
	}
	f.ok(t, "grep", map[string]any{"pattern": "HELLO", "case_insensitive": true, "glob": "*.go", "path": "sub"}, &out)
	if len(out.Matches) != 3 || out.Matches[0].Text != "// hello" {
		t.Fatalf("case-insensitive in sub: %+v", out.Matches)
	}
	f.ok(t, "grep", map[string]any{"pattern": "Hello", "max_matches": 2}, &out)
	if len(out.Matches) != 2 || !out.Truncated {
		t.Fatalf("max_matches 2: %+v", out)
	}
	f.fail(t, "grep", map[string]any{"pattern": "(a"}, ReasonInvalidArgs)
	f.fail(t, "grep", map[string]any{"pattern": "x", "path": "../"}, ReasonOutsideRoot)
}

func TestGrepByteCap(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": strings.Repeat(strings.Repeat("z", 1000)+"\n", 400)}, nil, Options{})
	var out grepOutput
	f.ok(t, "grep", map[string]any{"pattern": "z"}, &out)
	n := 0
	for _, m := range out.Matches {
		n += len(m.Text)
	}
	if !out.Truncated || n > 48<<10 || len(out.Matches[0].Text) != grepLineMax {
		t.Fatalf("byte cap: %d matches, %d bytes, truncated %v", len(out.Matches), n, out.Truncated)
	}
}

func TestGitignoreRules(t *testing.T) {
	ig := ignorer{}
	ig.push(parseGitignore(".", []byte("*.o\n!keep.o\ndocs/**/*.tmp\n\\#lit\ntrail\\ \n{x}\n")))
	ig.push(parseGitignore("a", []byte("/only\n")))
	for rel, want := range map[string]bool{
		"x.o": true, "d/e/x.o": true, "keep.o": false, "docs/a/b/c.tmp": true, "docs/c.tmp": true,
		"other/c.tmp": false, "#lit": true, "trail ": true, "trail": false, "{x}": true, "x": false,
		"a/only": true, "a/b/only": false, "only": false,
	} {
		if got := ig.ignored(rel, false); got != want {
			t.Errorf("ignored(%q) = %v, want %v", rel, got, want)
		}
	}
}

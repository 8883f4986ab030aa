package tools

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644)
	f := newFixture(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "last": "x\ny", ".env": "KEY=1", "bin": "a\x00\xff"}, nil, Options{})
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(f.dir, "link"))
	os.Symlink(outside, filepath.Join(f.dir, "dirlink"))

	var out readFileOutput
	f.ok(t, "read_file", map[string]any{"path": "a.txt"}, &out)
	if out.Content != "one\ntwo\nthree\n" || out.TotalLines != 3 || out.StartLine != 1 || out.EndLine != 3 {
		t.Fatalf("whole file: %+v", out)
	}
	f.ok(t, "read_file", map[string]any{"path": "a.txt", "start_line": 2, "end_line": 2}, &out)
	if out.Content != "two\n" || out.StartLine != 2 || out.EndLine != 2 {
		t.Fatalf("line 2: %+v", out)
	}
	f.ok(t, "read_file", map[string]any{"path": "last", "start_line": 2}, &out)
	if out.Content != "y" || out.TotalLines != 2 {
		t.Fatalf("last line without newline: %+v", out)
	}
	f.ok(t, "read_file", map[string]any{"path": filepath.Join(f.dir, "a.txt"), "end_line": 1}, &out)
	if out.Content != "one\n" {
		t.Fatalf("absolute path inside the root, line 1: %+v", out)
	}
	f.fail(t, "read_file", map[string]any{"path": "a.txt", "start_line": 9}, ReasonInvalidArgs)
	f.fail(t, "read_file", map[string]any{"path": "link"}, ReasonOutsideRoot)
	f.fail(t, "read_file", map[string]any{"path": "dirlink/secret"}, ReasonOutsideRoot)
	f.fail(t, "read_file", map[string]any{"path": "../" + filepath.Base(outside) + "/secret"}, ReasonOutsideRoot)
	f.fail(t, "read_file", map[string]any{"path": f.dir + "-evil/x"}, ReasonOutsideRoot)
	f.fail(t, "read_file", map[string]any{"path": ".env"}, ReasonDenied)
	f.fail(t, "read_file", map[string]any{"path": "bin"}, ReasonNotText)
	f.fail(t, "read_file", map[string]any{"path": "missing"}, "not_found")
}

func TestReadFileSizeCap(t *testing.T) {
	f := newFixture(t, map[string]string{"big": strings.Repeat("x", 2<<20)}, nil, Options{})
	f.fail(t, "read_file", map[string]any{"path": "big"}, "too_large")
}

func TestListDir(t *testing.T) {
	f := newFixture(t, map[string]string{"b.txt": "bb", "a/x": "", ".env": "K=1"}, nil, Options{})
	os.Symlink(t.TempDir(), filepath.Join(f.dir, "out"))
	var out listDirOutput
	f.ok(t, "list_dir", map[string]any{}, &out)
	want := []dirEntry{{Name: "a", Type: "dir"}, {Name: "b.txt", Type: "file", Size: 2}, {Name: "out", Type: "symlink"}}
	if !reflect.DeepEqual(out.Entries, want) || out.Truncated {
		t.Fatalf("list_dir . = %+v, want %+v (.env hidden by the policy)", out.Entries, want)
	}
	f.fail(t, "list_dir", map[string]any{"path": "out"}, ReasonOutsideRoot)
	f.fail(t, "list_dir", map[string]any{"path": ".."}, ReasonOutsideRoot)
}

func TestGlob(t *testing.T) {
	f := newFixture(t, map[string]string{"src/a.go": "", "src/sub/b.go": "", "src/c.txt": "", "d.go": "", "x/.env": ""}, nil, Options{})
	os.Symlink(t.TempDir(), filepath.Join(f.dir, "src", "evil"))
	var out globOutput
	f.ok(t, "glob", map[string]any{"pattern": "src/**/*.go"}, &out)
	if want := []string{"src/a.go", "src/sub/b.go"}; !reflect.DeepEqual(out.Matches, want) {
		t.Fatalf("glob src/**/*.go = %v, want %v", out.Matches, want)
	}
	f.ok(t, "glob", map[string]any{"pattern": "**/.env"}, &out)
	if len(out.Matches) != 0 {
		t.Fatalf("glob shows denied paths: %v", out.Matches)
	}
	f.ok(t, "glob", map[string]any{"pattern": "nowhere/*.go"}, &out)
	if len(out.Matches) != 0 {
		t.Fatalf("glob under a missing folder: %v", out.Matches)
	}
	f.fail(t, "glob", map[string]any{"pattern": "../*"}, ReasonInvalidArgs)
	f.fail(t, "glob", map[string]any{"pattern": "src/evil/**"}, ReasonOutsideRoot)
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := range 1005 {
		files["f/"+strconv.Itoa(i)] = ""
	}
	f := newFixture(t, files, nil, Options{})
	var out globOutput
	f.ok(t, "glob", map[string]any{"pattern": "f/*"}, &out)
	if len(out.Matches) != 1000 || !out.Truncated {
		t.Fatalf("glob of 1005 files: %d matches, truncated %v; want 1000, true", len(out.Matches), out.Truncated)
	}
}

func TestWriteFile(t *testing.T) {
	f := newFixture(t, map[string]string{".jido/skills/x/SKILL.md": "---\n", ".git/config": ""}, nil, Options{})
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(f.dir, "out"))
	os.Symlink(filepath.Join(outside, "new"), filepath.Join(f.dir, "dangling"))
	var out writeOutput
	f.ok(t, "write_file", map[string]any{"path": "new/dir/f.txt", "content": "hello"}, &out)
	if b, _ := os.ReadFile(filepath.Join(f.dir, "new/dir/f.txt")); string(b) != "hello" || out.Bytes != 5 {
		t.Fatalf("write_file wrote %q, reported %+v", b, out)
	}
	f.fail(t, "write_file", map[string]any{"path": ".jido/commands/evil.md", "content": "x"}, ReasonDenied)
	f.fail(t, "write_file", map[string]any{"path": ".jido/skills/x/SKILL.md", "content": "x"}, ReasonDenied)
	f.fail(t, "write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, ReasonDenied)
	f.fail(t, "write_file", map[string]any{"path": "out/x", "content": "x"}, ReasonOutsideRoot)
	f.fail(t, "write_file", map[string]any{"path": "dangling", "content": "x"}, ReasonOutsideRoot)
	f.fail(t, "write_file", map[string]any{"path": "a/.env", "content": "x"}, ReasonDenied)
	if _, err := os.Stat(filepath.Join(f.dir, ".jido/commands/evil.md")); err == nil {
		t.Fatal("a refused write left a file in .jido")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("a refused write left %v outside the root", ents)
	}
}

func TestEditFile(t *testing.T) {
	f := newFixture(t, map[string]string{"a.go": "x := 1\ny := 1\n", ".jido/commands/c.md": "hi"}, nil, Options{})
	var out writeOutput
	f.ok(t, "edit_file", map[string]any{"path": "a.go", "old_string": "x := 1", "new_string": "x := 2"}, &out)
	if b, _ := os.ReadFile(filepath.Join(f.dir, "a.go")); string(b) != "x := 2\ny := 1\n" || out.Replacements != 1 {
		t.Fatalf("edit once: %q %+v", b, out)
	}
	e := f.fail(t, "edit_file", map[string]any{"path": "a.go", "old_string": ":= ", "new_string": "= "}, ReasonMultipleMatches)
	if !strings.Contains(e.Message, "2 times") {
		t.Fatalf("multiple matches message: %s", e.Message)
	}
	f.fail(t, "edit_file", map[string]any{"path": "a.go", "old_string": "zzz", "new_string": ""}, ReasonNoMatch)
	f.ok(t, "edit_file", map[string]any{"path": "a.go", "old_string": ":= ", "new_string": "= ", "replace_all": true}, &out)
	if b, _ := os.ReadFile(filepath.Join(f.dir, "a.go")); string(b) != "x = 2\ny = 1\n" || out.Replacements != 2 {
		t.Fatalf("replace_all: %q %+v", b, out)
	}
	f.fail(t, "edit_file", map[string]any{"path": ".jido/commands/c.md", "old_string": "hi", "new_string": "rm -rf"}, ReasonDenied)
	f.fail(t, "edit_file", map[string]any{"path": "a.go", "old_string": "", "new_string": "x"}, ReasonInvalidArgs)
	if b, _ := os.ReadFile(filepath.Join(f.dir, ".jido/commands/c.md")); string(b) != "hi" {
		t.Fatalf("a refused edit changed .jido: %q", b)
	}
}

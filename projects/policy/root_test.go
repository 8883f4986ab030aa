package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// fixture is a project next to things it must never reach:
//
//	base/outside/secret      "SECRET"
//	base/proj-evil/secret    "SECRET" (a sibling sharing the root's prefix)
//	base/proj/ok.txt         "ok"
//	base/proj/docs/readme    "readme"
//	base/proj/secrets/k      "key"
//	base/proj/docs/x      -> ../secrets/k
//	base/proj/out         -> ../outside
//	base/proj/outabs      -> base/outside
//	base/proj/outfile     -> ../outside/secret
//	base/proj/dangling    -> ../outside/new
//	base/proj/danglingabs -> base/outside/new
//	base/proj/inabs       -> base/proj/docs (absolute, inside)
type fixture struct{ base, proj, outside, evil string }

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{base: base, proj: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside"), evil: filepath.Join(base, "proj-evil")}
	files := map[string]string{
		"outside/secret": "SECRET", "proj-evil/secret": "SECRET",
		"proj/ok.txt": "ok", "proj/docs/readme": "readme", "proj/secrets/k": "key",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	links := map[string]string{
		"docs/x": "../secrets/k", "out": "../outside", "outabs": f.outside, "outfile": "../outside/secret",
		"dangling": "../outside/new", "danglingabs": filepath.Join(f.outside, "new"), "inabs": filepath.Join(f.proj, "docs"),
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(f.proj, name)))
	}
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func openRoot(t *testing.T, dir string) *Root {
	t.Helper()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatalf("OpenRoot(%s): %v", dir, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// naivePath is the implementation these tests exist to reject: join, clean,
// compare prefixes.
func naivePath(root, p string) (string, bool) {
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(root, p)
	}
	return full, strings.HasPrefix(filepath.Clean(full), root)
}

func wantType(t *testing.T, err error, typ string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", typ)
	}
	if got := bus.ErrorType(err); got != typ {
		t.Fatalf("got error type %s (%v), want %s", got, err, typ)
	}
}

// escapes lists, per operation, paths that leave the root. Each case is
// first shown to escape through naivePath, so a case that stops being an
// escape class fails here rather than passing quietly.
func TestRootRefusesEveryEscape(t *testing.T) {
	abs := func(f fixture, rel string) string { return filepath.Join(f.base, rel) }
	type pathFn func(f fixture) string
	rel := func(p string) pathFn { return func(fixture) string { return p } }
	reads := map[string]pathFn{
		"dotdot":                rel("../outside/secret"),
		"dotdot after dir":      rel("docs/../../outside/secret"),
		"absolute outside":      func(f fixture) string { return abs(f, "outside/secret") },
		"sibling with prefix":   func(f fixture) string { return abs(f, "proj-evil/secret") },
		"absolute via dotdot":   func(f fixture) string { return f.proj + "/../outside/secret" },
		"symlink at end":        rel("outfile"),
		"symlink in middle":     rel("out/secret"),
		"absolute link middle":  rel("outabs/secret"),
		"inside via absolute":   func(f fixture) string { return f.proj + "/out/secret" },
		"dotdot after symlink":  rel("inabs/../../outside/secret"),
		"trailing dot segments": rel("out/./secret"),
	}
	for name, p := range reads {
		t.Run("read/"+name, func(t *testing.T) {
			f := newFixture(t)
			if full, ok := naivePath(f.proj, p(f)); ok {
				if b, err := os.ReadFile(full); err != nil || string(b) != "SECRET" {
					t.Fatalf("not an escape class: naive read of %s gave %q, %v", p(f), b, err)
				}
			}
			r := openRoot(t, f.proj)
			b, err := r.ReadFile(p(f), 1<<20)
			wantType(t, err, ReasonOutsideRoot)
			if b != nil {
				t.Fatalf("refused read returned %q", b)
			}
			_, err = r.Stat(p(f))
			wantType(t, err, ReasonOutsideRoot)
		})
	}
	writes := map[string]struct {
		path    pathFn
		created string // the outside file a naive write creates or clobbers
	}{
		"dotdot":             {rel("../outside/new"), "outside/new"},
		"absolute outside":   {func(f fixture) string { return abs(f, "outside/new") }, "outside/new"},
		"sibling":            {func(f fixture) string { return abs(f, "proj-evil/new") }, "proj-evil/new"},
		"dangling link":      {rel("dangling"), "outside/new"},
		"dangling abs link":  {rel("danglingabs"), "outside/new"},
		"link at end":        {rel("outfile"), "outside/secret"},
		"link in middle":     {rel("out/new"), "outside/new"},
		"link middle mkdirs": {rel("out/a/b/new"), "outside/a/b/new"},
	}
	for name, c := range writes {
		t.Run("write/"+name, func(t *testing.T) {
			naive := newFixture(t)
			full, ok := naivePath(naive.proj, c.path(naive))
			if ok {
				must(t, os.MkdirAll(filepath.Dir(full), 0o755))
				must(t, os.WriteFile(full, []byte("PWNED"), 0o644))
			}
			if b, _ := os.ReadFile(filepath.Join(naive.base, c.created)); ok && string(b) != "PWNED" {
				t.Fatalf("not an escape class: naive write of %s did not reach %s", c.path(naive), c.created)
			}
			f := newFixture(t)
			r := openRoot(t, f.proj)
			wantType(t, r.WriteFile(c.path(f), []byte("PWNED"), 0o644), ReasonOutsideRoot)
			wantType(t, r.MkdirAll(c.path(f)+"/d"), ReasonOutsideRoot)
			b, err := os.ReadFile(filepath.Join(f.base, c.created))
			if string(b) == "PWNED" || (err == nil && c.created != "outside/secret") {
				t.Fatalf("refused write still reached %s: %q, %v", c.created, b, err)
			}
		})
	}
	lists := map[string]pathFn{
		"dotdot":            rel(".."),
		"absolute outside":  func(f fixture) string { return f.outside },
		"sibling":           func(f fixture) string { return f.evil },
		"link at end":       rel("out"),
		"absolute link":     rel("outabs"),
		"link then subpath": rel("out/."),
	}
	for name, p := range lists {
		t.Run("list/"+name, func(t *testing.T) {
			f := newFixture(t)
			if full, ok := naivePath(f.proj, p(f)); ok {
				if _, err := os.ReadDir(full); err != nil {
					t.Fatalf("not an escape class: naive list of %s: %v", p(f), err)
				}
			}
			r := openRoot(t, f.proj)
			_, err := r.ReadDir(p(f))
			wantType(t, err, ReasonOutsideRoot)
			wantType(t, r.WalkDir(p(f), func(string, fs.DirEntry, error) error { t.Fatal("walk visited an entry"); return nil }), ReasonOutsideRoot)
		})
	}
	removes := map[string]pathFn{
		"dotdot":           rel("../outside/secret"),
		"absolute outside": func(f fixture) string { return abs(f, "outside/secret") },
		"sibling":          func(f fixture) string { return abs(f, "proj-evil/secret") },
		"link in middle":   rel("out/secret"),
		"abs link middle":  rel("outabs/secret"),
	}
	for name, p := range removes {
		t.Run("remove/"+name, func(t *testing.T) {
			naive := newFixture(t)
			if full, ok := naivePath(naive.proj, p(naive)); ok {
				must(t, os.Remove(full))
			}
			f := newFixture(t)
			r := openRoot(t, f.proj)
			wantType(t, r.Remove(p(f)), ReasonOutsideRoot)
			if _, err := os.Stat(filepath.Join(f.outside, "secret")); err != nil {
				t.Fatalf("refused remove still removed: %v", err)
			}
			if _, err := os.Stat(filepath.Join(f.evil, "secret")); err != nil {
				t.Fatalf("refused remove still removed: %v", err)
			}
		})
	}
}

// Removing a link that points out removes the link, an entry inside the
// root, and never its target.
func TestRootRemoveLinkKeepsTarget(t *testing.T) {
	f := newFixture(t)
	r := openRoot(t, f.proj)
	must(t, r.Remove("outfile"))
	if _, err := os.Lstat(filepath.Join(f.proj, "outfile")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("link still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret")); string(b) != "SECRET" {
		t.Fatal("the link's target was touched")
	}
}

func TestRootInsideAccess(t *testing.T) {
	f := newFixture(t)
	r := openRoot(t, f.proj)
	for path, want := range map[string]string{
		"ok.txt": "ok", "./docs/../ok.txt": "ok", f.proj + "/ok.txt": "ok",
		"docs/x": "key", "inabs/readme": "readme", "inabs/x": "key",
	} {
		b, err := r.ReadFile(path, 100)
		if err != nil || string(b) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", path, b, err, want)
		}
	}
	for path, want := range map[string]string{
		"docs/x": "secrets/k", "inabs/x": "secrets/k", "inabs": "docs", ".": ".", "docs/..": ".",
		"new/file": "new/file", "inabs/new": "docs/new", "inabs/n/./m/": "docs/n/m", f.proj: ".",
	} {
		if got, err := r.Resolve(path); err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	must(t, r.WriteFile("a/b/c.txt", []byte("hello"), 0o644))
	must(t, r.WriteFile("a/b/c.txt", []byte("hi"), 0o644))
	if b, _ := os.ReadFile(filepath.Join(f.proj, "a/b/c.txt")); string(b) != "hi" {
		t.Fatalf("write then overwrite gave %q", b)
	}
	must(t, r.WriteFile("docs/x", []byte("new key"), 0o644)) // through a link inside
	if b, _ := os.ReadFile(filepath.Join(f.proj, "secrets/k")); string(b) != "new key" {
		t.Fatalf("write through inside link gave %q", b)
	}
	entries, err := r.ReadDir("inabs")
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"readme", "x"}) {
		t.Fatalf("ReadDir(inabs) = %v", names)
	}
	var walked []string
	must(t, r.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		must(t, err)
		walked = append(walked, p)
		return nil
	}))
	want := []string{".", "a", "a/b", "a/b/c.txt", "dangling", "danglingabs", "docs", "docs/readme", "docs/x",
		"inabs", "ok.txt", "out", "outabs", "outfile", "secrets", "secrets/k"}
	if !slices.Equal(walked, want) {
		t.Fatalf("WalkDir = %v\nwant %v", walked, want)
	}
	_, err = r.ReadFile("ok.txt", 1)
	wantType(t, err, bus.ReasonTooLarge)
	_, err = r.ReadFile("missing", 1)
	wantType(t, err, bus.ReasonNotFound)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file error %v is not fs.ErrNotExist", err)
	}
}

func TestOpenRootRefusals(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	must(t, os.Symlink("/", filepath.Join(base, "slash")))
	for _, c := range []struct{ dir, typ string }{
		{"/", bus.ReasonInvalidRequest},
		{filepath.Join(base, "slash"), bus.ReasonInvalidRequest},
		{"/../..", bus.ReasonInvalidRequest},
		{filepath.Join(base, "missing"), bus.ReasonNotFound},
		{file, bus.ReasonInvalidRequest},
		{"", bus.ReasonInvalidRequest},
	} {
		_, err := OpenRoot(c.dir)
		if bus.ErrorType(err) != c.typ {
			t.Errorf("OpenRoot(%q) = %v, want %s", c.dir, err, c.typ)
		}
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(base, "locked")
		must(t, os.Mkdir(locked, 0o000))
		t.Cleanup(func() { os.Chmod(locked, 0o755) })
		if _, err := OpenRoot(locked); bus.ErrorType(err) != bus.ReasonInvalidRequest {
			t.Errorf("OpenRoot(unreadable) = %v", err)
		}
	}
	// A root named through a symlink is resolved to its real path, and
	// absolute paths under either name are inside.
	real := filepath.Join(base, "real")
	must(t, os.Mkdir(real, 0o755))
	must(t, os.WriteFile(filepath.Join(real, "f"), []byte("f"), 0o644))
	must(t, os.Symlink(real, filepath.Join(base, "alias")))
	r := openRoot(t, filepath.Join(base, "alias"))
	if want, _ := filepath.EvalSymlinks(real); r.Path() != want {
		t.Fatalf("Path() = %s, want %s", r.Path(), want)
	}
	for _, p := range []string{filepath.Join(base, "alias", "f"), filepath.Join(r.Path(), "f")} {
		if b, err := r.ReadFile(p, 10); err != nil || string(b) != "f" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
}

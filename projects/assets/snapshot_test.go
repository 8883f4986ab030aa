package assets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tree writes files (path relative to the returned data dir → content).
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		write(t, dir, rel, content)
	}
	return dir
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, desc string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\nDo the thing.\n", name, desc, name)
}

func load(t testing.TB, dir string, opts Options) *Snapshot {
	t.Helper()
	s, err := Load(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// diagFor returns the diagnostics naming file.
func diagFor(s *Snapshot, file string) []Diagnostic {
	var out []Diagnostic
	for _, d := range s.Diagnostics {
		if d.File == file {
			out = append(out, d)
		}
	}
	return out
}

func TestLoadSkillsAndCommands(t *testing.T) {
	dir := tree(t, map[string]string{
		"skills/review/SKILL.md":       "---\nname: review\ndescription: Reviews code.\nlicense: MIT\ncompatibility: any\nmetadata:\n  author: me\nallowed-tools: Bash(git diff:*) Read\n---\n# Review\nLook hard.\n",
		"skills/review/scripts/run.sh": "echo",
		"commands/deploy.md":           "Deploy $1 now.\n",
		"commands/git/commit.md":       "---\ndescription: Commit\nargument-hint: '[message]'\nallowed-tools: Bash(git add:*), Bash(git commit:*)\nmodel: small\n---\nCommit with $ARGUMENTS\n",
		"commands/notes.txt":           "not a command",
		"commands/.hidden.md":          "skipped",
	})
	s := load(t, dir, Options{})
	if len(s.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %v", s.Diagnostics)
	}
	sk := s.Skills["review"]
	if sk == nil || sk.Description != "Reviews code." || sk.License != "MIT" || sk.Metadata["author"] != "me" ||
		strings.Join(sk.AllowedTools, "|") != "Bash(git diff:*)|Read" || sk.Source.File != "skills/review/SKILL.md" || sk.BodyLine != 10 {
		t.Fatalf("skill: %+v", sk)
	}
	if len(s.Commands) != 2 {
		t.Fatalf("commands: %v", keys(s.Commands))
	}
	c := s.Commands["git:commit"]
	if c == nil || c.ArgumentHint != "[message]" || c.Model != "small" || strings.Join(c.AllowedTools, "|") != "Bash(git add:*)|Bash(git commit:*)" || c.Body != "Commit with $ARGUMENTS\n" {
		t.Fatalf("command: %+v", c)
	}
	body, err := sk.Body()
	if err != nil || body != "# Review\nLook hard.\n" {
		t.Fatalf("body %q, %v", body, err)
	}
	if s.Version != 1 || len(s.Digest) != 64 {
		t.Fatalf("version %d digest %q", s.Version, s.Digest)
	}
}

func TestSkillBodyRefusesChangedFile(t *testing.T) {
	dir := tree(t, map[string]string{"skills/a/SKILL.md": skillMD("a", "d")})
	s := load(t, dir, Options{})
	write(t, dir, "skills/a/SKILL.md", skillMD("a", "d2"))
	if _, err := s.Skills["a"].Body(); !errors.Is(err, ErrChanged) {
		t.Fatalf("edited: err = %v, want ErrChanged", err)
	}
	os.Remove(filepath.Join(dir, "skills/a/SKILL.md"))
	if _, err := s.Skills["a"].Body(); !errors.Is(err, ErrChanged) {
		t.Fatalf("removed: err = %v, want ErrChanged", err)
	}
}

// Every diagnostic class: the broken file is refused with file:line:
// reason, and the good files beside it load.
func TestDiagnostics(t *testing.T) {
	cases := []struct {
		name, file, content string
		line                int
		reason              string
	}{
		{"malformed yaml", "skills/bad/SKILL.md", "---\nname: bad\ndescription: d\nmetadata: {a: b\n---\n", 4, ""},
		{"unknown key", "skills/bad/SKILL.md", "---\nname: bad\ndescription: d\ncolour: red\n---\n", 4, "metadata"},
		{"name not folder", "skills/bad/SKILL.md", skillMD("other", "d"), 2, "does not match its folder"},
		{"name grammar upper", "skills/Bad/SKILL.md", skillMD("Bad", "d"), 2, "lowercase"},
		{"name double hyphen", "skills/a--b/SKILL.md", skillMD("a--b", "d"), 2, "double hyphen"},
		{"name leading hyphen", "skills/-a/SKILL.md", skillMD("-a", "d"), 2, "hyphen"},
		{"name too long", "skills/" + strings.Repeat("a", 65) + "/SKILL.md", skillMD(strings.Repeat("a", 65), "d"), 2, "over the 64"},
		{"no name, folder no name", "skills/Bad/SKILL.md", "---\ndescription: d\n---\n", 2, "no name"},
		{"no description", "skills/bad/SKILL.md", "---\nname: bad\n---\n# Bad\n", 2, "no description"},
		{"description too long", "skills/bad/SKILL.md", skillMD("bad", strings.Repeat("x", 1025)), 2, "over the 1024"},
		{"compatibility too long", "skills/bad/SKILL.md", "---\nname: bad\ndescription: d\ncompatibility: " + strings.Repeat("x", 501) + "\n---\n", 2, "over the 500"},
		{"metadata not strings", "skills/bad/SKILL.md", "---\nname: bad\ndescription: d\nmetadata:\n  a: [1]\n---\n", 5, ""},
		{"no front matter", "skills/bad/SKILL.md", "# just text\n", 1, "no front matter"},
		{"unclosed front matter", "skills/bad/SKILL.md", "---\nname: bad\n", 1, "never closed"},
		{"not utf8", "skills/bad/SKILL.md", "---\nname: bad\ndescription: d\n---\nok\n\xff\xfe\n", 6, "UTF-8"},
		{"oversized", "skills/bad/SKILL.md", skillMD("bad", "d") + strings.Repeat("x", 2000), 0, "limit"},
		{"command bad yaml", "commands/bad.md", "---\nallowed-tools: [Read\n---\n", 2, ""},
		{"command unknown key", "commands/bad.md", "---\nfoo: 1\n---\n", 2, "argument-hint"},
		{"command bad name", "commands/b ad.md", "x", 0, "letters"},
		{"command not utf8", "commands/bad.md", "\xc3\x28", 1, "UTF-8"},
		{"skill folder without SKILL.md", "skills/empty/README.md", "x", 0, ""},
		{"file at skills top", "skills/loose.md", "x", 0, "not a skill"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"skills/good/SKILL.md": skillMD("good", "fine"),
				"commands/good.md":     "fine",
				c.file:                 c.content,
			})
			s := load(t, dir, Options{MaxFileSize: 1500})
			want := c.file
			if c.name == "skill folder without SKILL.md" {
				want = "skills/empty"
			}
			ds := diagFor(s, want)
			if len(ds) == 0 {
				t.Fatalf("no diagnostic for %s; got %v", want, s.Diagnostics)
			}
			d := ds[0]
			if d.Line != c.line || !strings.Contains(d.Reason, c.reason) {
				t.Fatalf("diagnostic %q, want line %d and %q", d, c.line, c.reason)
			}
			if len(s.Skills) != 1 || s.Skills["good"] == nil || len(s.Commands) != 1 || s.Commands["good"] == nil {
				t.Fatalf("the good assets did not all load: skills %v commands %v", keys(s.Skills), keys(s.Commands))
			}
		})
	}
}

func TestDuplicateCommandNamesBothRefused(t *testing.T) {
	dir := tree(t, map[string]string{"commands/Deploy.md": "a", "commands/deploy.md": "b", "commands/ok.md": "c"})
	s := load(t, dir, Options{})
	if len(s.Commands) != 1 || s.Commands["ok"] == nil {
		t.Fatalf("commands %v, want only ok", keys(s.Commands))
	}
	a, b := diagFor(s, "commands/Deploy.md"), diagFor(s, "commands/deploy.md")
	if len(a) != 1 || !strings.Contains(a[0].Reason, "commands/deploy.md") || len(b) != 1 || !strings.Contains(b[0].Reason, "commands/Deploy.md") {
		t.Fatalf("diagnostics %v", s.Diagnostics)
	}
}

func TestSymlinksAndFIFOsRefused(t *testing.T) {
	outside := tree(t, map[string]string{"secret/SKILL.md": skillMD("secret", "outside"), "x.md": "secret"})
	dir := tree(t, map[string]string{"skills/good/SKILL.md": skillMD("good", "fine")})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "skills/secret")))
	must(os.MkdirAll(filepath.Join(dir, "skills/linked"), 0o755))
	must(os.Symlink(filepath.Join(outside, "secret/SKILL.md"), filepath.Join(dir, "skills/linked/SKILL.md")))
	must(os.MkdirAll(filepath.Join(dir, "commands"), 0o755))
	must(os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(dir, "commands/x.md")))
	must(os.Symlink(outside, filepath.Join(dir, "commands/dir")))
	must(os.MkdirAll(filepath.Join(dir, "skills/fifo"), 0o755))
	must(mkfifo(filepath.Join(dir, "skills/fifo/SKILL.md")))
	s := load(t, dir, Options{})
	if len(s.Skills) != 1 || len(s.Commands) != 0 {
		t.Fatalf("skills %v commands %v", keys(s.Skills), keys(s.Commands))
	}
	for _, f := range []string{"skills/secret", "skills/linked/SKILL.md", "commands/x.md", "skills/fifo/SKILL.md"} {
		if len(diagFor(s, f)) != 1 {
			t.Errorf("no diagnostic for %s: %v", f, s.Diagnostics)
		}
	}
}

func TestTenThousandFilesInSkills(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 files")
	}
	dir := t.TempDir()
	for i := range 10_000 {
		write(t, dir, fmt.Sprintf("skills/s%05d/SKILL.md", i), skillMD(fmt.Sprintf("s%05d", i), "d"))
	}
	s := load(t, dir, Options{})
	if len(s.Skills) != 10_000 || len(s.Diagnostics) != 0 {
		t.Fatalf("%d skills, %d diagnostics", len(s.Skills), len(s.Diagnostics))
	}
	// Bounded: with a lower cap the load stops and says so.
	s = load(t, dir, Options{MaxFilesPerKind: 100, MaxDiagnostics: 10})
	if len(s.Skills) != 100 || len(diagFor(s, "skills")) != 1 {
		t.Fatalf("%d skills, diagnostics %v", len(s.Skills), s.Diagnostics)
	}
}

func TestDiagnosticsAreCapped(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("skills/loose%02d.md", i)] = "x"
	}
	s := load(t, tree(t, files), Options{MaxDiagnostics: 10})
	if len(s.Diagnostics) != 11 || !strings.Contains(s.Diagnostics[10].Reason, "40 more") {
		t.Fatalf("%d diagnostics: %v", len(s.Diagnostics), s.Diagnostics[len(s.Diagnostics)-1])
	}
}

func TestMissingDataDirIsAnError(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope"), Options{}); !errors.Is(err, ErrDataDir) {
		t.Fatalf("err = %v, want ErrDataDir", err)
	}
	s := load(t, t.TempDir(), Options{})
	if len(s.Skills)+len(s.Commands)+len(s.Diagnostics) != 0 {
		t.Fatal("empty data dir loaded something")
	}
}

func TestReloadReadsOnlyChangedFilesAndDiffs(t *testing.T) {
	dir := tree(t, map[string]string{
		"skills/a/SKILL.md": skillMD("a", "d"),
		"skills/b/SKILL.md": skillMD("b", "d"),
		"commands/c.md":     "c",
	})
	var set Set
	_, s1, ch, err := set.Reload(dir, Options{})
	if err != nil || s1.Version != 1 || len(ch.Skills.Added) != 2 || len(ch.Commands.Added) != 1 {
		t.Fatalf("first: %+v %v", ch, err)
	}
	// Nothing changed: same digest and version, an empty diff, and the
	// very same asset values (nothing was read again).
	_, s2, ch, _ := set.Reload(dir, Options{})
	if !ch.Empty() || s2.Version != 1 || s2.Digest != s1.Digest || s2.Skills["a"] != s1.Skills["a"] {
		t.Fatalf("no-op reload: %+v version %d", ch, s2.Version)
	}
	// Change a, remove b, add d, break c.
	write(t, dir, "skills/a/SKILL.md", skillMD("a", "new description"))
	bump(t, dir, "skills/a/SKILL.md")
	os.RemoveAll(filepath.Join(dir, "skills/b"))
	write(t, dir, "skills/d/SKILL.md", skillMD("d", "d"))
	write(t, dir, "commands/c.md", "---\nbad: [\n---\n")
	old, s3, ch, _ := set.Reload(dir, Options{})
	if old != s2 || set.Load() != s3 || s3.Version != 2 {
		t.Fatalf("swap: old %p want %p, version %d", old, s2, s3.Version)
	}
	want := Changes{
		Skills:   KindDiff{Added: []string{"d"}, Changed: []string{"a"}, Removed: []string{"b"}},
		Commands: KindDiff{Removed: []string{"c"}},
	}
	if fmt.Sprint(ch.Skills, ch.Commands) != fmt.Sprint(want.Skills, want.Commands) || !ch.DiagnosticsChanged || len(ch.Diagnostics) != 1 {
		t.Fatalf("diff %+v", ch)
	}
	if s3.Skills["a"].Description != "new description" {
		t.Fatal("changed skill not re-read")
	}
}

// bump moves a file's mtime forward so a rewrite within the filesystem's
// timestamp granularity is still seen as a change.
func bump(t testing.TB, dir, rel string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	mt := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}

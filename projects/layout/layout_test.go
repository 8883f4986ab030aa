package layout

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestNewPaths(t *testing.T) {
	l, err := New("/w/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	want := Layout{Root: "/w/proj", DataDir: "/w/proj/.jido", Skills: "/w/proj/.jido/skills", Commands: "/w/proj/.jido/commands",
		Workflows: "/w/proj/.jido/workflows", SkillGraph: "/w/proj/.jido/skill_graph", State: "/w/proj/.jido/state"}
	if l != want {
		t.Fatalf("got %+v\nwant %+v", l, want)
	}
	l, err = New("/w/proj", ".assist")
	if err != nil || l.Skills != "/w/proj/.assist/skills" {
		t.Fatalf("custom data dir: %+v %v", l, err)
	}
}

func TestBadDataDirRefused(t *testing.T) {
	for _, name := range []string{"/etc", "a/b", `a\b`, "..", ".", "../x", "x..", "a\x00b"} {
		if _, err := New("/w/proj", name); !errors.Is(err, ErrBadDataDir) {
			t.Errorf("New(%q) err = %v, want ErrBadDataDir", name, err)
		}
	}
	if err := ValidateDataDir(""); !errors.Is(err, ErrBadDataDir) {
		t.Errorf("ValidateDataDir(\"\") = %v, want ErrBadDataDir", err)
	}
}

func TestEnsureCreatesMissingOnly(t *testing.T) {
	root := t.TempDir()
	l, err := New(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(l.Skills, 0o700); err != nil {
		t.Fatal(err)
	}
	created, err := l.Ensure()
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 4 {
		t.Fatalf("created %v, want the 4 missing folders", created)
	}
	for _, d := range l.Dirs() {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", d, err)
		}
	}
	fi, _ := os.Stat(l.Commands)
	if fi.Mode().Perm()&^0o755 != 0 || fi.Mode().Perm()&0o700 != 0o700 {
		t.Fatalf("mode %v, want 0755 under the umask", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(l.Skills); fi.Mode().Perm() != 0o700 {
		t.Fatalf("existing folder's mode changed to %v", fi.Mode().Perm())
	}
	created, err = l.Ensure()
	if err != nil || len(created) != 0 {
		t.Fatalf("second Ensure: %v %v", created, err)
	}
}

func TestEnsureRefusesFileAndSymlink(t *testing.T) {
	root := t.TempDir()
	l, _ := New(root, "")
	if err := os.WriteFile(l.DataDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(); err == nil {
		t.Fatal("a file in place of the data dir was accepted")
	}
	os.Remove(l.DataDir)
	outside := t.TempDir()
	if err := os.Symlink(outside, l.DataDir); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(); err == nil {
		t.Fatal("a symlinked data dir was accepted")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("Ensure created %v outside the root", entries)
	}
	l2, _ := New(filepath.Join(root, "missing"), "")
	if _, err := l2.Ensure(); err == nil {
		t.Fatal("a missing root was accepted")
	}
}

package projects

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnescapeMount: mountinfo writes a space, tab, newline and backslash
// in a path as three octal digits; anything else stays as it is.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/plain`:             "/plain",
		`/a\040b`:            "/a b",
		`/tab\011nl\012`:     "/tab\tnl\n",
		`/back\134slash`:     `/back\slash`,
		`/short\04`:          `/short\04`,
		`/not\089octal`:      `/not\089octal`,
		`/trailing\`:         `/trailing\`,
		`/two\040\040spaces`: "/two  spaces",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFSPathOfAFolder: a folder's path in its file system ends with the
// folder's own path below its mount point, and is the same for the folder
// and for any path that reaches it.
func TestFSPathOfAFolder(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a b")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p, s := fsPathOf(dir), fsPathOf(sub)
	if p.path == "" || p.dev == "" {
		t.Skipf("no mountinfo here: %+v", p)
	}
	if s.dev != p.dev || s.path != filepath.Join(p.path, "a b") {
		t.Fatalf("fsPathOf(%s) = %+v, fsPathOf(%s) = %+v: want the second one below the first", dir, p, sub, s)
	}
}

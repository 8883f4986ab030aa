//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// A file with another hard link (which may name a file outside the root)
// is never written by write_file or edit_file, and read by read_file and
// grep only where the policy says paths.read_hard_links.
func TestFileToolsRefuseHardLinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(outside, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]string{"a.txt": "root here\n"}, nil, Options{})
	if err := os.Link(outside, filepath.Join(f.dir, "linked")); err != nil {
		t.Skipf("no hard link across these folders: %v", err)
	}
	for tool, args := range map[string]map[string]any{
		"read_file":  {"path": "linked"},
		"write_file": {"path": "linked", "content": "pwned\n"},
		"edit_file":  {"path": "linked", "old_string": "root", "new_string": "pwned"},
	} {
		if e := f.fail(t, tool, args, ReasonDenied); !strings.Contains(e.Message, "hard links") {
			t.Errorf("%s: %q does not say the file has other hard links", tool, e.Message)
		}
	}
	var out grepOutput
	f.ok(t, "grep", map[string]any{"pattern": "root"}, &out)
	if len(out.Matches) != 1 || out.Matches[0].Path != "a.txt" || out.FilesSkipped != 1 {
		t.Errorf("grep: %+v; want a.txt alone, linked skipped", out)
	}
	if b, _ := os.ReadFile(outside); string(b) != "root:x:0:0\n" {
		t.Errorf("the file outside is now %q", b)
	}

	// The policy may allow reading them; never writing.
	p, err := policy.Load("test", []byte("paths:\n  read_hard_links: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := newFixture(t, nil, p, Options{})
	if err := os.Link(outside, filepath.Join(r.dir, "linked")); err != nil {
		t.Fatal(err)
	}
	var read readFileOutput
	r.ok(t, "read_file", map[string]any{"path": "linked"}, &read)
	if read.Content != "root:x:0:0\n" {
		t.Errorf("read with read_hard_links: %+v", read)
	}
	r.fail(t, "write_file", map[string]any{"path": "linked", "content": "pwned\n"}, ReasonDenied)
}

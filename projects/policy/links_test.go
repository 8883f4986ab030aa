//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A regular file with another hard link may be a name for a file outside
// the root (made before the project was opened): the file tools never
// write it, and read it only where the policy says paths.read_hard_links
// (issue 20, item 5). The check is on the file opened.
func TestHardLinkedFilesAreRefused(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(f.outside, "passwd")
	must(t, os.WriteFile(outside, []byte("root:x:0:0"), 0o644))
	must(t, os.Link(outside, filepath.Join(f.proj, "linked")))
	must(t, os.Link(filepath.Join(f.proj, "ok.txt"), filepath.Join(f.proj, "twin"))) // two names inside: refused as well

	sb := openSandbox(t, f.proj, "")
	for _, path := range []string{"linked", "twin", "ok.txt"} {
		_, err := sb.ReadFile("read_file", path, 1<<20)
		wantType(t, err, ReasonDenied)
		if err != nil && (!strings.Contains(err.Error(), "2 hard links") || !strings.Contains(err.Error(), "paths.read_hard_links: true")) {
			t.Errorf("read %s: %v; want the refusal to say it has other links and how to allow reading", path, err)
		}
		err = sb.WriteFile("write_file", path, []byte("pwned"), 0o644)
		wantType(t, err, ReasonDenied)
		if err != nil && !strings.Contains(err.Error(), "hard links") {
			t.Errorf("write %s: %v", path, err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "root:x:0:0" {
		t.Errorf("the file outside is now %q", b)
	}
	// The node's own reads (a policy file, the assistant's config) refuse
	// them too.
	if _, err := openRoot(t, f.proj).ReadFile("linked", 1<<20); err == nil {
		t.Errorf("Root.ReadFile read a hard-linked file")
	}

	// The policy may allow reading them; never writing.
	sb = openSandbox(t, f.proj, "paths:\n  read_hard_links: true\n")
	if b, err := sb.ReadFile("read_file", "linked", 1<<20); err != nil || string(b) != "root:x:0:0" {
		t.Errorf("read with read_hard_links: %q %v", b, err)
	}
	wantType(t, sb.WriteFile("write_file", "linked", []byte("pwned"), 0o644), ReasonDenied)

	// Once the other name is gone the file is an ordinary one again.
	must(t, os.Remove(filepath.Join(f.proj, "twin")))
	sb = openSandbox(t, f.proj, "")
	if err := sb.WriteFile("write_file", "ok.txt", []byte("new"), 0o644); err != nil {
		t.Errorf("write ok.txt with one link: %v", err)
	}
}

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsSeedTable: docs/seeds.md, the seed documents item by item, cannot
// drift from the code: each row has one of the four statuses, every
// package path it names exists in the checkout, and every test it names
// is a test function of the repository.
func TestDocsSeedTable(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "seeds.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests := testFunctions(t, root)
	topDirs := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			topDirs[e.Name()] = true
		}
	}
	code := regexp.MustCompile("`([^`]+)`")
	testName := regexp.MustCompile(`^Test[A-Z0-9_]\w*$`)
	statuses := map[string]bool{"built": true, "Go equivalent": true, "partial": true, "not built": true, "not built (non-goal)": true}
	rows, sections := 0, 0
	for n, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## Seed") {
			sections++
		}
		if sections == 0 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| §") || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 5 {
			t.Errorf("docs/seeds.md:%d: %d cells, want 5 (§, seed item, status, in jido-bus, tested by)", n+1, len(cells))
			continue
		}
		rows++
		if !statuses[cells[2]] {
			t.Errorf("docs/seeds.md:%d: status %q, want built, Go equivalent, partial, not built or not built (non-goal)", n+1, cells[2])
		}
		for _, m := range code.FindAllStringSubmatch(cells[3]+" "+cells[4], -1) {
			tok := m[1]
			switch {
			case testName.MatchString(tok):
				if !tests[tok] {
					t.Errorf("docs/seeds.md:%d: no test function %s in the repository", n+1, tok)
				}
			case !strings.ContainsAny(tok, " {}<>*") && strings.Contains(tok, "/") && topDirs[strings.SplitN(tok, "/", 2)[0]]:
				if _, err := os.Stat(filepath.Join(root, tok)); err != nil {
					t.Errorf("docs/seeds.md:%d: %s: no such file or directory", n+1, tok)
				}
			}
		}
	}
	if sections < 4 || rows < 100 {
		t.Errorf("docs/seeds.md has %d seed sections and %d rows; want the four seeds item by item", sections, rows)
	}
}

// testFunctions returns the names of the test functions of the repository.
func testFunctions(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

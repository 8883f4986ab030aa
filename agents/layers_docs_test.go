package agents_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutDoc is the one document that states the layout: the table of
// folders and the dependency line that levels checks.
const layoutDoc = "../docs/development.md"

// lineText is the dependency line as layoutDoc writes it, inside
// backquotes after "The line:".
var lineText = regexp.MustCompile("The line: `([^`]+)`")

// TestLayoutDocIsTheLayers: the layout document's dependency line is
// levels, highest first, and its table has a row for every home, so
// that what a newcomer reads is what the import test enforces.
func TestLayoutDocIsTheLayers(t *testing.T) {
	doc, err := os.ReadFile(layoutDoc)
	if err != nil {
		t.Fatal(err)
	}
	m := lineText.FindSubmatch(doc)
	if m == nil {
		t.Fatalf("%s has no \"The line: `…`\": write the dependency line there", layoutDoc)
	}
	var got [][]string
	for _, level := range strings.Split(strings.Join(strings.Fields(string(m[1])), " "), "→") {
		var homes []string
		for _, h := range strings.Split(level, ",") {
			homes = append(homes, strings.TrimSpace(h))
		}
		slices.Sort(homes)
		got = append(got, homes)
	}
	var want [][]string
	for i := len(levels) - 1; i >= 0; i-- {
		homes := slices.Clone(levels[i])
		slices.Sort(homes)
		want = append(want, homes)
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("%s's dependency line is\n\t%v\nbut the import test checks\n\t%v\nchange both together", layoutDoc, got, want)
	}
	for _, level := range levels {
		for _, h := range level {
			if !strings.Contains(string(doc), "| `"+h+"/") && !strings.Contains(string(doc), ", `"+h+"/") {
				t.Errorf("%s's layout table has no row for %s/", layoutDoc, h)
			}
		}
	}
}

// TestLayoutStatedOnce: no other file of the module copies the
// dependency line; a copy drifts (conversation's package doc kept one
// that lacked cluster and deploy). Package docs point to layoutDoc.
func TestLayoutStatedOnce(t *testing.T) {
	// A run of the line long enough to be a copy and not a mention.
	copied := regexp.MustCompile(`internal/bench\s*(//\s*)?→\s*(//\s*)?node\s*(//\s*)?→`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md") {
			return nil
		}
		if rel := filepath.ToSlash(path); rel == layoutDoc || strings.HasSuffix(rel, "agents/layers_test.go") || strings.HasSuffix(rel, "agents/layers_docs_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if copied.Match(b) {
			t.Errorf("%s copies the dependency line: point to docs/development.md (The layout) instead", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package assets

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

func graphFS(notes map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range notes {
		fsys["skill_graph/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

func mustGraph(t *testing.T, notes map[string]string) (*Graph, []Diagnostic) {
	t.Helper()
	g, diags := BuildGraph(graphFS(notes))
	if g == nil {
		t.Fatal("BuildGraph returned nil")
	}
	return g, diags
}

func TestGraphNodesTitlesLinksAndNeighbours(t *testing.T) {
	g, diags := mustGraph(t, map[string]string{
		"index.md":         "---\ntitle: ignored\n---\n# Start here\n\nSee [[go/testing]] and [[errors|how errors work]].\n",
		"go/testing.md":    "Intro line.\n\n## Table tests\n\nBack to [[index#Start here]].\n",
		"go/errors.md":     "# Errors\n\nWrap with %w.\n```\n[[not-a-link]]\n```\nand `[[nor this]]`.\n",
		"readme.txt":       "not a note",
		"deep/a/b/leaf.md": "# Leaf\n",
	})
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if e, ok := g.Entry(); !ok || e != "index" {
		t.Fatalf("entry %q %v", e, ok)
	}
	n, ok := g.Node("go/testing")
	if !ok || n.Title != "Table tests" || n.Source.File != "skill_graph/go/testing.md" {
		t.Fatalf("node %+v %v", n, ok)
	}
	if n, _ := g.Node("deep/a/b/leaf"); n.Title != "Leaf" {
		t.Fatalf("leaf title %q", n.Title)
	}
	if n, _ := g.Node("index"); n.Title != "Start here" || fmt.Sprint(n.Links) != "[go/errors go/testing]" {
		t.Fatalf("index %+v (front matter is not the title; links resolve by id and by base name)", n)
	}
	if _, ok := g.Node("readme"); ok {
		t.Fatal("a .txt file became a node")
	}
	nb, ok := g.Neighbours("go/testing")
	if !ok || fmt.Sprint(nb.Out) != "[index]" || fmt.Sprint(nb.In) != "[index]" {
		t.Fatalf("neighbours %+v", nb)
	}
	nb, _ = g.Neighbours("go/errors")
	if len(nb.Out) != 0 || fmt.Sprint(nb.In) != "[index]" {
		t.Fatalf("links inside code were followed: %+v", nb)
	}
	if _, ok := g.Neighbours("nope"); ok {
		t.Fatal("neighbours of a missing note")
	}
	// The graph is immutable: changing what a query returned changes nothing.
	n, _ = g.Node("index")
	n.Links[0] = "mutated"
	if n2, _ := g.Node("index"); n2.Links[0] != "go/errors" {
		t.Fatal("Node returned the graph's own slice")
	}
	if g.Len() != 4 {
		t.Fatalf("Len %d", g.Len())
	}
}

func TestGraphTitleFallsBackToTheFileName(t *testing.T) {
	g, _ := mustGraph(t, map[string]string{"index.md": "no heading\n", "sub/plain-note.md": "text"})
	if n, _ := g.Node("sub/plain-note"); n.Title != "plain-note" {
		t.Fatalf("title %q", n.Title)
	}
}

func TestGraphBadLinksAreDiagnosticsAndTheRestLoads(t *testing.T) {
	g, diags := mustGraph(t, map[string]string{
		"index.md":      "# I\n\n[[a/dup]] fine\n[[nowhere]]\nthen [[dup|x]]\n[[a/dup#No such heading]]\n[[]]\n",
		"a/dup.md":      "# Dup\n",
		"b/dup.md":      "# Dup too\n",
		"bad.md":        "# Bad \xff\xfe\n",
		"links-bad.md":  "# Links to bad\n[[bad]]\n",
		"\xffname.md":   "# bad name\n",
		"notes/ok.md":   "# Ok\n[[index]]\n",
		"empty-name.md": "",
	})
	all := strings.Join(func() []string {
		var s []string
		for _, d := range diags {
			s = append(s, d.String())
		}
		return s
	}(), "\n")
	for _, want := range []string{
		`skill_graph/index.md:4: link [[nowhere]]: no note "nowhere"`,
		`skill_graph/index.md:5: link [[dup|x]]: ambiguous, "dup" could be a/dup or b/dup; write the full id`,
		`skill_graph/index.md:6: link [[a/dup#No such heading]]: note a/dup has no heading "No such heading"`,
		`skill_graph/index.md:7: link [[]]: empty target`,
		`skill_graph/bad.md:1: is not UTF-8 text`,
		`skill_graph/links-bad.md:2: link [[bad]]: no note "bad" (skill_graph/bad.md was refused, see its diagnostic)`,
		`file name is not UTF-8`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics\n%s\nlack %q", all, want)
		}
	}
	if _, ok := g.Node("bad"); ok {
		t.Error("a non-UTF-8 note was loaded")
	}
	if n, ok := g.Node("notes/ok"); !ok || fmt.Sprint(n.Links) != "[index]" {
		t.Errorf("the rest did not load: %+v", n)
	}
	if n, _ := g.Node("index"); fmt.Sprint(n.Links) != "[a/dup]" {
		t.Errorf("index links %v; only resolved links are edges", n.Links)
	}
}

func TestGraphWithoutIndexSaysSo(t *testing.T) {
	g, diags := mustGraph(t, map[string]string{"a.md": "# A\n"})
	if _, ok := g.Entry(); ok {
		t.Fatal("entry without index.md")
	}
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "skill_graph/index.md") {
		t.Fatalf("diagnostics %v", diags)
	}
	// An empty graph (no folder at all) is not a problem.
	g, diags = BuildGraph(fstest.MapFS{})
	if g.Len() != 0 || len(diags) != 0 {
		t.Fatalf("empty graph: %d nodes, %v", g.Len(), diags)
	}
}

func TestGraphPathTerminatesOnCyclesAndIsShortest(t *testing.T) {
	g, _ := mustGraph(t, map[string]string{
		"index.md": "# I\n[[a]] [[b]]\n",
		"a.md":     "[[b]] [[c]] [[index]]\n",
		"b.md":     "[[a]] [[index]] [[b]]\n",
		"c.md":     "[[d]]\n",
		"d.md":     "[[c]] [[a]]\n",
		"lone.md":  "[[lone]]\n",
	})
	cases := []struct{ from, to, want string }{
		{"index", "d", "[index a d]"}, // d links back to a
		{"d", "index", "[d a index]"}, // links are followed both ways
		{"b", "b", "[b]"},
		{"lone", "lone", "[lone]"},
	}
	for _, c := range cases {
		p, err := g.Path(c.from, c.to)
		if err != nil || fmt.Sprint(p) != c.want {
			t.Errorf("Path(%s, %s) = %v, %v; want %s", c.from, c.to, p, err, c.want)
		}
	}
	if _, err := g.Path("index", "lone"); !errors.Is(err, ErrNoPath) {
		t.Errorf("unconnected: err = %v; want ErrNoPath", err)
	}
	if _, err := g.Path("index", "ghost"); !errors.Is(err, ErrUnknownNote) || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("unknown: err = %v; want ErrUnknownNote naming ghost", err)
	}
}

func TestGraphSearchRanksTitleHitsFirstAndIsCaseInsensitive(t *testing.T) {
	g, _ := mustGraph(t, map[string]string{
		"index.md":       "# Index\nnothing here\n",
		"retries.md":     "# Retries with Backoff\nUse jitter.\n",
		"body-only.md":   "# Other\nsometimes a BACKOFF helps.\n",
		"many.md":        "# Many\nbackoff backoff backoff backoff\n",
		"backoff-ids.md": "# Unrelated\nno match in text\n",
		"partial.md":     "# Partial\nbackoff without the other word\n",
	})
	hits := g.Search("Backoff", 10)
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if fmt.Sprint(ids) != "[retries backoff-ids many body-only partial]" {
		t.Fatalf("ranking %v", ids)
	}
	if hits[0].Score != 11 || !strings.Contains(hits[3].Snippet, "BACKOFF helps") {
		t.Fatalf("hits %+v", hits)
	}
	if got := g.Search("backoff jitter", 10); len(got) != 1 || got[0].ID != "retries" {
		t.Fatalf("all terms must match: %+v", got)
	}
	if got := g.Search("backoff", 2); len(got) != 2 {
		t.Fatalf("limit ignored: %d hits", len(got))
	}
	if got := g.Search("   ", 10); len(got) != 0 {
		t.Fatalf("blank query matched %d", len(got))
	}
}

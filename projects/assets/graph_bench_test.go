package assets

import (
	"fmt"
	"testing"
	"testing/fstest"
)

// tenThousandNotes is a graph of 10,000 notes in 100 folders, each linking
// to its neighbour by id and to a note in the next folder by base name.
func tenThousandNotes() fstest.MapFS {
	fsys := fstest.MapFS{"skill_graph/index.md": {Data: []byte("# Index\n[[d0/n0]]\n")}}
	for i := range 10000 {
		d, n := i/100, i%100
		body := fmt.Sprintf("# Note %d\n\nAbout topic%d and retries.\nSee [[d%d/n%d]] and [[u%d]].\n", i, i%37, d, (n+1)%100, (i+100)%10000)
		fsys[fmt.Sprintf("skill_graph/d%d/n%d.md", d, n)] = &fstest.MapFile{Data: []byte(body)}
		fsys[fmt.Sprintf("skill_graph/d%d/u%d.md", d, i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("unique %d [[d%d/n%d]]\n", i, d, n))}
	}
	return fsys
}

func TestGraphOfTenThousandNotesLoadsWithoutDiagnostics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 20,000 notes")
	}
	g, diags := BuildGraph(tenThousandNotes())
	if len(diags) != 0 {
		t.Fatalf("%d diagnostics, first %v", len(diags), diags[0])
	}
	if g.Len() != 20001 {
		t.Fatalf("Len %d", g.Len())
	}
	if p, err := g.Path("index", "d99/n50"); err != nil || len(p) < 2 {
		t.Fatalf("path %v %v", p, err)
	}
	if hits := g.Search("topic5 retries", 20); len(hits) != 20 {
		t.Fatalf("%d hits", len(hits))
	}
}

func BenchmarkGraphBuild10k(b *testing.B) {
	fsys := tenThousandNotes()
	b.ReportAllocs()
	for b.Loop() {
		if g, _ := BuildGraph(fsys); g.Len() == 0 {
			b.Fatal("empty")
		}
	}
}

func BenchmarkGraphSearch10k(b *testing.B) {
	g, _ := BuildGraph(tenThousandNotes())
	b.ReportAllocs()
	for b.Loop() {
		if len(g.Search("topic5 retries", 20)) == 0 {
			b.Fatal("no hits")
		}
	}
}

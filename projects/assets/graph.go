package assets

import (
	"errors"
	"fmt"
	"slices"
)

// Graph is the project's skill graph: one node per skill_graph/**/*.md,
// edges from its resolved wiki links. It is immutable once built, so any
// number of goroutines may query it; queries return copies.
//
// Links are directed as written (Node.Links, Neighbours.Out), and Path
// walks them both ways: a link says two notes are related, and a reader
// asking how two notes connect does not care who wrote the link.
type Graph struct {
	nodes []node
	byID  map[string]int
	out   [][]int // out[i]: resolved link targets of node i, sorted by id, no repeats
	in    [][]int // in[i]: nodes linking to i, sorted by id, no repeats
	undir [][]int // undir[i]: out ∪ in, sorted by id: the adjacency Path walks
	entry int     // index of "index", or -1
}

// node is one note as held by the graph.
type node struct {
	id, title string
	headings  []string
	source    Source
	text      string // the note's text (front matter removed)
	lower     string // text, lower-cased, for Search
	lowerID   string
	lowerT    string
}

// Node is one note as a query returns it.
type Node struct {
	// ID is the note's path below skill_graph, without ".md", with '/'.
	ID string `json:"id"`
	// Title is the note's first heading, else its file name.
	Title string `json:"title"`
	// Headings are the note's ATX headings in order.
	Headings []string `json:"headings"`
	// Links are the ids the note links to, resolved, sorted, no repeats.
	Links  []string `json:"links"`
	Source Source   `json:"source"`
	// Text is the note's markdown without its front matter.
	Text string `json:"text"`
}

// Neighbours are the notes linked from a note (Out) and to it (In), by id,
// sorted.
type Neighbours struct {
	Out []string `json:"out"`
	In  []string `json:"in"`
}

// ErrUnknownNote is wrapped by a query's error when an id names no note;
// ErrNoPath when two notes are not connected.
var (
	ErrUnknownNote = errors.New("no such note")
	ErrNoPath      = errors.New("the notes are not connected")
)

// Len is the number of notes.
func (g *Graph) Len() int { return len(g.nodes) }

// Entry is the id of the graph's entry note, "index" (skill_graph/index.md),
// and whether it exists.
func (g *Graph) Entry() (string, bool) {
	if g.entry < 0 {
		return "", false
	}
	return g.nodes[g.entry].id, true
}

// IDs are all note ids, sorted.
func (g *Graph) IDs() []string {
	ids := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		ids[i] = n.id
	}
	return ids
}

// Node returns the note with this id.
func (g *Graph) Node(id string) (Node, bool) {
	i, ok := g.byID[id]
	if !ok {
		return Node{}, false
	}
	n := g.nodes[i]
	return Node{ID: n.id, Title: n.title, Headings: slices.Clone(n.headings), Links: g.ids(g.out[i]), Source: n.source, Text: n.text}, true
}

// Neighbours returns the notes this one links to and those linking to it.
func (g *Graph) Neighbours(id string) (Neighbours, bool) {
	i, ok := g.byID[id]
	if !ok {
		return Neighbours{}, false
	}
	return Neighbours{Out: g.ids(g.out[i]), In: g.ids(g.in[i])}, true
}

func (g *Graph) ids(idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = g.nodes[i].id
	}
	return out
}

// Path returns a shortest chain of notes from one to the other, both
// included, following links in either direction (breadth-first, so cycles
// end it like any visited note). Among shortest paths it returns the one
// that visits smaller ids first, so the answer is the same every time.
func (g *Graph) Path(from, to string) ([]string, error) {
	src, ok := g.byID[from]
	if !ok {
		return nil, fmt.Errorf("path from %q: %w", from, ErrUnknownNote)
	}
	dst, ok := g.byID[to]
	if !ok {
		return nil, fmt.Errorf("path to %q: %w", to, ErrUnknownNote)
	}
	prev := make([]int, len(g.nodes))
	for i := range prev {
		prev[i] = -1
	}
	prev[src] = src
	queue := []int{src}
	for len(queue) > 0 && prev[dst] < 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, nb := range g.undir[cur] {
			if prev[nb] < 0 {
				prev[nb] = cur
				queue = append(queue, nb)
			}
		}
	}
	if prev[dst] < 0 {
		return nil, fmt.Errorf("path from %q to %q: %w", from, to, ErrNoPath)
	}
	var rev []int
	for i := dst; i != src; i = prev[i] {
		rev = append(rev, i)
	}
	rev = append(rev, src)
	slices.Reverse(rev)
	return g.ids(rev), nil
}

package assets

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// graphDir is the skill graph's folder in the data directory.
const graphDir = "skill_graph"

// noteFile is one note as read, before its links are resolved: what the
// reload cache keeps per note file.
type noteFile struct {
	node
	links []Link
}

// BuildGraph builds the skill graph from skill_graph/**/*.md in fsys, a
// view of the project's data directory, with the default Options; Load
// does the same for a Snapshot. A note's id is its path below
// skill_graph without ".md", with '/'.
//
// A link resolves to the note whose id is its target, else — for a target
// without '/' — to the one note whose file name is the target. A link to
// no note, to several (ambiguous) or to a missing heading is a Diagnostic
// and no edge; a note that cannot be read (not UTF-8, too large, not a
// regular file) is a Diagnostic and no node; the rest builds. Notes with
// links but no skill_graph/index.md get a Diagnostic: index is the entry.
// The result is never nil.
func BuildGraph(fsys fs.FS) (*Graph, []Diagnostic) {
	l := newLoader(plainFS{fsys}, "", Options{}.withDefaults())
	notes, refused, _ := l.loadNotes()
	g, diags := buildGraph(notes, refused)
	l.diags = append(l.diags, diags...)
	return g, l.finishDiagnostics()
}

// loadNotes loads every skill_graph/**/*.md (see walkMarkdown). It returns the notes that loaded, the ids of those
// refused (id → file), and whether any note file was read rather than
// reused from the previous load.
func (l *loader) loadNotes() (notes []*noteFile, refused map[string]string, changed bool) {
	refused = map[string]string{}
	l.walkMarkdown(graphDir, func(rel string, fi fs.FileInfo) {
		r := l.file(rel, fi, parseNote)
		if r != l.prev[rel] {
			changed = true
		}
		if n, ok := r.asset.(*noteFile); ok {
			notes = append(notes, n)
		} else {
			refused[noteID(rel)] = rel
		}
	})
	return notes, refused, changed
}

// noteID is skill_graph/a/b.md's id, "a/b".
func noteID(rel string) string {
	return strings.TrimSuffix(strings.TrimPrefix(rel, graphDir+"/"), ".md")
}

// parseNote reads one note: its text without front matter, headings,
// title and links. A note has no required form, so it never fails.
func parseNote(rel string, data []byte, src Source) (string, any, []Diagnostic) {
	id := noteID(rel)
	text := stripFrontMatter(string(data))
	n := &noteFile{node: node{id: id, source: src, text: text}, links: ParseLinks(text)}
	n.headings = headings(text)
	n.title = path.Base(id)
	if len(n.headings) > 0 {
		n.title = n.headings[0]
	}
	n.lower, n.lowerID, n.lowerT = strings.ToLower(text), strings.ToLower(id), strings.ToLower(n.title)
	return id, n, nil
}

// buildGraph resolves the notes' links into a Graph; refused are the ids
// of notes that did not load (id → file), named in a link's diagnostic.
// The notes are not modified.
func buildGraph(notes []*noteFile, refused map[string]string) (*Graph, []Diagnostic) {
	sorted := slices.Clone(notes)
	// Node indexes follow id order (link relies on it), whatever order
	// the folders were listed in.
	slices.SortFunc(sorted, func(a, b *noteFile) int { return strings.Compare(a.id, b.id) })
	g := &Graph{byID: make(map[string]int, len(sorted)), entry: -1, nodes: make([]node, len(sorted))}
	links := make([][]Link, len(sorted))
	for i, n := range sorted {
		g.nodes[i] = n.node
		g.byID[n.id] = i
		links[i] = n.links
	}
	diags := g.link(links, refused)
	if i, ok := g.byID["index"]; ok {
		g.entry = i
	} else if len(g.nodes) > 0 {
		diags = append(diags, Diagnostic{File: graphDir + "/index.md", Reason: "missing: the skill graph has notes but no index.md, its entry note; add one linking to the main notes"})
	}
	return g, diags
}

// link resolves every note's links into edges and reports the ones that
// do not resolve.
func (g *Graph) link(links [][]Link, refused map[string]string) []Diagnostic {
	var diags []Diagnostic
	byBase := map[string][]int{}
	for i, n := range g.nodes {
		b := path.Base(n.id)
		byBase[b] = append(byBase[b], i)
	}
	g.out = make([][]int, len(g.nodes))
	g.in = make([][]int, len(g.nodes))
	g.undir = make([][]int, len(g.nodes))
	for i, ls := range links {
		for _, l := range ls {
			to, reason := g.resolve(l, byBase, refused)
			if reason != "" {
				diags = append(diags, Diagnostic{File: g.nodes[i].source.File, Line: l.Line, Reason: fmt.Sprintf("link %s: %s", linkText(l), reason)})
				continue
			}
			g.out[i] = append(g.out[i], to)
			g.in[to] = append(g.in[to], i)
		}
	}
	// Node indexes follow id order, so sorting indexes sorts by id.
	for i := range g.nodes {
		slices.Sort(g.out[i])
		g.out[i] = slices.Compact(g.out[i])
		slices.Sort(g.in[i])
		g.in[i] = slices.Compact(g.in[i])
		u := append(slices.Clone(g.out[i]), g.in[i]...)
		slices.Sort(u)
		g.undir[i] = slices.Compact(u)
	}
	return diags
}

func (g *Graph) resolve(l Link, byBase map[string][]int, refused map[string]string) (int, string) {
	if l.Target == "" {
		return 0, "empty target"
	}
	to, ok := g.byID[l.Target]
	if !ok && !strings.Contains(l.Target, "/") {
		switch c := byBase[l.Target]; len(c) {
		case 0:
		case 1:
			to, ok = c[0], true
		default:
			ids := g.ids(c)
			return 0, fmt.Sprintf("ambiguous, %q could be %s; write the full id", l.Target, strings.Join(ids[:len(ids)-1], ", ")+" or "+ids[len(ids)-1])
		}
	}
	if !ok {
		if file, was := refused[l.Target]; was {
			return 0, fmt.Sprintf("no note %q (%s was refused, see its diagnostic)", l.Target, file)
		}
		return 0, fmt.Sprintf("no note %q", l.Target)
	}
	if l.Heading != "" && !slices.ContainsFunc(g.nodes[to].headings, func(h string) bool { return strings.EqualFold(h, l.Heading) }) {
		return 0, fmt.Sprintf("note %s has no heading %q", g.nodes[to].id, l.Heading)
	}
	return to, ""
}

func linkText(l Link) string {
	s := l.Target
	if l.Heading != "" {
		s += "#" + l.Heading
	}
	if l.Alias != "" {
		s += "|" + l.Alias
	}
	return "[[" + s + "]]"
}

// stripFrontMatter removes a leading YAML front matter block, kept as
// blank lines so line numbers still match the file. A note's front matter
// is not interpreted; an unclosed block is left as text.
func stripFrontMatter(text string) string {
	fm, err := splitFrontMatter([]byte(text))
	if err != nil || !fm.present {
		return text
	}
	return strings.Repeat("\n", fm.bodyLine-1) + string(fm.body)
}

// headings are the note's ATX headings ("# Title" … "###### Title"),
// outside fenced code, trimmed of closing #s.
func headings(text string) []string {
	var hs []string
	fence := ""
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			if fence == "" {
				fence = m[1]
				continue
			}
			if isFenceClose(line, fence) {
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue
		}
		level := len(t) - len(strings.TrimLeft(t, "#"))
		if level < 1 || level > 6 || (len(t) > level && t[level] != ' ' && t[level] != '\t') {
			continue
		}
		h := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[level:]), "#"))
		if h != "" {
			hs = append(hs, h)
		}
	}
	return hs
}

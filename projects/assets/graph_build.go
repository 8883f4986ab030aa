package assets

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// graphDir is the skill graph's folder in the data directory.
const graphDir = "skill_graph"

// BuildGraph builds the skill graph from skill_graph/**/*.md in fsys, a
// view of the project's data directory (an os.Root's FS in the node).
// A note's id is its path below skill_graph without ".md", with '/'.
//
// A link resolves to the note whose id is its target, else — for a target
// without '/' — to the one note whose file name is the target. A link to
// no note, to several (ambiguous) or to a missing heading is a Diagnostic
// and no edge; a note that cannot be read (not UTF-8, too large, not a
// regular file) is a Diagnostic and no node; the rest builds. Notes with
// links but no skill_graph/index.md get a Diagnostic: index is the entry.
// The result is never nil.
func BuildGraph(fsys fs.FS) (*Graph, []Diagnostic) {
	var diags []Diagnostic
	g := &Graph{byID: map[string]int{}, entry: -1}
	refused := map[string]string{} // id → file, for notes that did not load
	var links [][]Link
	err := fs.WalkDir(fsys, graphDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == graphDir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			diags = append(diags, Diagnostic{File: p, Reason: fmt.Sprintf("cannot read: %v", err)})
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		id := strings.TrimSuffix(strings.TrimPrefix(p, graphDir+"/"), ".md")
		if !utf8.ValidString(p) {
			diags = append(diags, Diagnostic{File: strings.ToValidUTF8(p, "\uFFFD"), Reason: "file name is not UTF-8: rename the file"})
			return nil
		}
		data, src, err := readAsset(fsys, p, maxNoteBytes)
		if err == nil && !utf8.Valid(data) {
			err = errors.New("not UTF-8: save the note as UTF-8")
		}
		if err != nil {
			diags = append(diags, Diagnostic{File: p, Reason: err.Error()})
			refused[id] = p
			return nil
		}
		text := stripFrontMatter(string(data))
		n := node{id: id, source: src, text: text}
		n.headings = headings(text)
		n.title = path.Base(id)
		if len(n.headings) > 0 {
			n.title = n.headings[0]
		}
		n.lower, n.lowerID, n.lowerT = strings.ToLower(text), strings.ToLower(id), strings.ToLower(n.title)
		g.byID[id] = len(g.nodes)
		g.nodes = append(g.nodes, n)
		links = append(links, ParseLinks(text))
		return nil
	})
	if err != nil {
		diags = append(diags, Diagnostic{File: graphDir, Reason: fmt.Sprintf("cannot list: %v", err)})
	}
	// WalkDir visits in lexical order, so g.nodes is sorted by id.
	diags = append(diags, g.link(links, refused)...)
	if i, ok := g.byID["index"]; ok {
		g.entry = i
	} else if len(g.nodes) > 0 {
		diags = append(diags, Diagnostic{File: graphDir + "/index.md", Reason: "missing: the skill graph has notes but no index.md, its entry note; add one linking to the main notes"})
	}
	sort.SliceStable(diags, func(i, j int) bool {
		if diags[i].File != diags[j].File {
			return diags[i].File < diags[j].File
		}
		return diags[i].Line < diags[j].Line
	})
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

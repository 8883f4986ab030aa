package assets

import "sort"

// KindDiff is what changed in one kind between two snapshots: names added,
// names whose file or content hash changed, names removed; each sorted.
type KindDiff struct {
	Added   []string `json:"added,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Empty reports whether nothing changed in the kind.
func (k KindDiff) Empty() bool { return len(k.Added)+len(k.Changed)+len(k.Removed) == 0 }

// Changes is the difference between two snapshots, the payload of
// project.assets.reloaded: per kind (graph notes by id), and the new
// snapshot's diagnostics when they differ from the old one's.
type Changes struct {
	Skills      KindDiff     `json:"skills"`
	Commands    KindDiff     `json:"commands"`
	Workflows   KindDiff     `json:"workflows"`
	Notes       KindDiff     `json:"notes"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// DiagnosticsChanged is true when the diagnostics differ, so a fix
	// that only clears a diagnostic is still a change.
	DiagnosticsChanged bool `json:"diagnostics_changed,omitempty"`
}

// Empty reports whether the two snapshots hold the same set: a reload
// that changes nothing appends nothing.
func (c Changes) Empty() bool {
	return c.Skills.Empty() && c.Commands.Empty() && c.Workflows.Empty() && c.Notes.Empty() && !c.DiagnosticsChanged
}

// Diff compares old (nil for none) with next.
func Diff(old, next *Snapshot) Changes {
	if old == nil {
		old = &Snapshot{}
	}
	if next == nil {
		next = &Snapshot{}
	}
	c := Changes{
		Skills:    diffKind(old.Skills, next.Skills, func(s *Skill) Source { return s.Source }),
		Commands:  diffKind(old.Commands, next.Commands, func(c *Command) Source { return c.Source }),
		Workflows: diffKind(old.Workflows, next.Workflows, func(w *Workflow) Source { return w.Source }),
		Notes:     diffNotes(old.Graph, next.Graph),
	}
	c.DiagnosticsChanged = !sameDiagnostics(old.Diagnostics, next.Diagnostics)
	if c.DiagnosticsChanged {
		c.Diagnostics = next.Diagnostics
	}
	return c
}

// diffKind compares one kind's maps; an asset changed when its file or
// its content hash did (a reload that reuses a file's asset keeps it).
func diffKind[T any](old, next map[string]T, src func(T) Source) KindDiff {
	var d KindDiff
	for name, n := range next {
		o, ok := old[name]
		switch {
		case !ok:
			d.Added = append(d.Added, name)
		case src(o).File != src(n).File || src(o).Hash != src(n).Hash:
			d.Changed = append(d.Changed, name)
		}
	}
	for name := range old {
		if _, ok := next[name]; !ok {
			d.Removed = append(d.Removed, name)
		}
	}
	sort.Strings(d.Added)
	sort.Strings(d.Changed)
	sort.Strings(d.Removed)
	return d
}

// diffNotes compares two graphs' notes by id, as diffKind does; both
// graphs hold their nodes sorted by id, so one merge pass does it.
// A note whose own file is unchanged is not "changed" when only what its
// links resolve to did: the note that came or went is listed itself.
func diffNotes(old, next *Graph) KindDiff {
	var d KindDiff
	var a, b []node
	if old != nil {
		a = old.nodes
	}
	if next != nil {
		b = next.nodes
	}
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].id < b[0].id:
			d.Removed = append(d.Removed, a[0].id)
			a = a[1:]
		case len(a) == 0 || b[0].id < a[0].id:
			d.Added = append(d.Added, b[0].id)
			b = b[1:]
		default:
			if a[0].source.File != b[0].source.File || a[0].source.Hash != b[0].source.Hash {
				d.Changed = append(d.Changed, b[0].id)
			}
			a, b = a[1:], b[1:]
		}
	}
	return d
}

func sameDiagnostics(a, b []Diagnostic) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

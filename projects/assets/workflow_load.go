package assets

import (
	"errors"
	"io/fs"
	"sort"
	"strings"
)

// workflowsDir is the workflows' folder in the data directory.
const workflowsDir = "workflows"

// LoadWorkflows loads workflows/*.md from fsys, a view of the project's
// data directory, with the default Options and known as KnownTools. Files
// in sub-folders and files not ending in .md are not workflows. A file
// that fails to load is a Diagnostic and the rest load; two files
// declaring the same name are both refused, each diagnostic naming the
// other file. The result is sorted by name. Load does the same for a
// Snapshot.
func LoadWorkflows(fsys fs.FS, known ToolNames) ([]*Workflow, []Diagnostic) {
	l := newLoader(plainFS{fsys}, "", Options{KnownTools: known}.withDefaults())
	byName := collect[*Workflow](l, l.loadWorkflows())
	out := make([]*Workflow, 0, len(byName))
	for _, w := range byName {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, l.finishDiagnostics()
}

// loadWorkflows lists workflows/ (not its sub-folders) and loads each
// *.md file; hidden files are skipped.
func (l *loader) loadWorkflows() []named {
	var claims []named
	budget := l.opts.MaxFilesPerKind
	_, err := l.readDir(workflowsDir, &budget, func(e fs.DirEntry) {
		if hidden(e.Name()) || e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			return
		}
		rel := workflowsDir + "/" + e.Name()
		fi, err := l.fs.lstat(rel)
		if err != nil {
			l.diag(rel, 0, "cannot be read: %v", err)
			return
		}
		r := l.file(rel, fi, l.parseWorkflow)
		if r.asset != nil {
			claims = append(claims, named{key: r.name, name: r.name, rel: rel, asset: r.asset})
		}
	})
	if errors.Is(err, errTooMany) {
		l.tooMany(workflowsDir)
	} else if err != nil {
		l.diag(workflowsDir, 0, "cannot be listed: %v", err)
	}
	return claims
}

// parseWorkflow is ParseWorkflow against the loader's known tools.
func (l *loader) parseWorkflow(rel string, data []byte, src Source) (string, any, []Diagnostic) {
	w, diags := ParseWorkflow(rel, data, l.knownTool)
	if w == nil {
		return "", nil, diags
	}
	w.Source = src
	return w.Name, w, nil
}

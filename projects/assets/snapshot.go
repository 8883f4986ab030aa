package assets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults for Options' zero values.
const (
	DefaultMaxFileSize     = 1 << 20 // bytes per asset file
	DefaultMaxFilesPerKind = 50_000  // entries looked at per kind's folder (a graph of 20,000 notes fits)
	DefaultMaxDiagnostics  = 1_000   // diagnostics kept per load
	maxWalkDepth           = 16      // folder levels under commands/
)

// Options tune Load. The zero value is the defaults.
type Options struct {
	// MaxFileSize is the largest asset file read, in bytes; a larger file
	// is a diagnostic and is not read. 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxFilesPerKind bounds the folder entries looked at under each
	// kind's folder, so a folder of a million files costs a bounded load;
	// past it one diagnostic says what was skipped. 0 means the default.
	MaxFilesPerKind int
	// MaxDiagnostics bounds the diagnostics kept; past it one diagnostic
	// counts the rest. 0 means the default.
	MaxDiagnostics int
	// Previous is the snapshot this load replaces, or nil. Files whose
	// size, mode and modification time are unchanged since Previous was
	// built are not read again: their asset (or their diagnostics) is
	// reused, so a reload costs about the files that changed.
	Previous *Snapshot
	// Now stamps Source.LoadedAt; nil means time.Now.
	Now func() time.Time
	// KnownTools says which tool names a workflow step may call. The
	// project's tool catalog (projects/tools) supplies it: built-in and
	// custom tools. ToolName(KindCommand, <name>) is also known when <name> is a
	// command of the set being loaded, so a workflow may call the
	// project's own commands without the catalog. nil knows no other
	// tool: a step naming one is a diagnostic and its workflow is left
	// out — a workflow is never loaded against tools nobody checked.
	// A reload re-checks every workflow whose answers changed (a tool or
	// a command appeared or went away), even if its file did not.
	KnownTools ToolNames
}

func (o Options) withDefaults() Options {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxFilesPerKind <= 0 {
		o.MaxFilesPerKind = DefaultMaxFilesPerKind
	}
	if o.MaxDiagnostics <= 0 {
		o.MaxDiagnostics = DefaultMaxDiagnostics
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Snapshot is one project's loaded asset set. It is immutable once Load
// returns it: callers must not modify it or the assets it holds, and any
// number of goroutines may read it at once. A new set is a new Snapshot
// (see Set).
type Snapshot struct {
	// DataDir is the folder the set was loaded from.
	DataDir string
	// Version counts the distinct sets loaded into one chain of reloads:
	// 1 for a first load, Previous.Version when nothing changed (same
	// Digest), Previous.Version+1 otherwise.
	Version uint64
	// Digest is the sha256 (hex) of every asset's kind, name and content
	// hash and of every diagnostic, in a fixed order: two snapshots with
	// the same Digest hold the same set.
	Digest string
	// Skills, Commands and Workflows are keyed by name. An asset is here
	// only when its file loaded without a problem and no other asset
	// claimed its name.
	Skills    map[string]*Skill
	Commands  map[string]*Command
	Workflows map[string]*Workflow
	// Graph is the skill graph built from skill_graph/**/*.md; never nil
	// (empty when there are no notes).
	Graph *Graph
	// Diagnostics are the problems found, sorted by file then line.
	Diagnostics []Diagnostic

	// files remembers what each file read (or refused) looked like, for
	// the next reload. Keyed by the file's path relative to DataDir.
	files map[string]*fileResult
	// graphDiags and noteFiles let a reload that touched no note reuse
	// Graph whole: the link diagnostics it produced and how many note
	// files it was built from.
	graphDiags []Diagnostic
	noteFiles  int
}

// fileStamp is what a reload compares to decide whether to read a file
// again. A rewrite that keeps size and mtime (to the nanosecond) is not
// seen; editors and git both change mtime.
type fileStamp struct {
	size    int64
	mode    fs.FileMode
	modTime int64
}

// fileResult is what loading one file gave: at most one asset under a
// name, or diagnostics, never both.
type fileResult struct {
	stamp fileStamp
	name  string // the asset's name, "" when the file was refused
	asset any    // *Skill, *Command, *Workflow, *noteFile: the kind's own type
	diags []Diagnostic
	// tools are the tool names the parse asked about and the answers it
	// got (workflows only): the result is reused only while every
	// answer is still the same.
	tools map[string]bool
}

// ErrDataDir is wrapped when the data dir itself cannot be read: the one
// failure that is not a diagnostic.
var ErrDataDir = errors.New("project data dir unreadable")

// Load reads the asset set under dataDir (the project's data dir, e.g.
// <root>/.jido). A missing kind folder is an empty kind. Every problem
// with a file is a Diagnostic and that file's asset is left out; the
// error is only for a data dir that cannot be opened.
//
// Files are read through an os.Root on dataDir, symlinks are refused
// (assets are regular files inside the data dir), and FIFOs and devices
// are never read.
func Load(dataDir string, opts Options) (*Snapshot, error) {
	opts = opts.withDefaults()
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDataDir, dataDir, err)
	}
	defer root.Close()
	l := newLoader(rootFS{root}, dataDir, opts)
	var prev *Snapshot
	if opts.Previous != nil && opts.Previous.DataDir == dataDir {
		prev = opts.Previous
		l.prev = prev.files
	}
	s := &Snapshot{DataDir: dataDir, files: l.next}
	s.Skills = collect[*Skill](l, l.loadSkills())
	s.Commands = collect[*Command](l, l.loadCommands())
	l.commandTools = make(map[string]bool, len(s.Commands))
	for c := range s.Commands {
		l.commandTools[ToolName(KindCommand, c)] = true
	}
	s.Workflows = collect[*Workflow](l, l.loadWorkflows())
	notes, refused, changed := l.loadNotes()
	s.noteFiles = len(notes) + len(refused)
	if prev != nil && prev.Graph != nil && !changed && s.noteFiles == prev.noteFiles {
		// Not one note file changed, came or went: the links resolve
		// as before, so the graph (immutable) is shared.
		s.Graph, s.graphDiags = prev.Graph, prev.graphDiags
	} else {
		s.Graph, s.graphDiags = buildGraph(notes, refused)
	}
	l.diags = append(l.diags, s.graphDiags...)
	s.Diagnostics = l.finishDiagnostics()
	s.Digest = s.digest()
	s.Version = 1
	if p := opts.Previous; p != nil {
		s.Version = p.Version + 1
		if p.Digest == s.Digest {
			s.Version = p.Version
		}
	}
	return s, nil
}

// loader is the state of one Load.
type loader struct {
	fs      assetFS
	dataDir string
	opts    Options
	now     time.Time
	prev    map[string]*fileResult
	next    map[string]*fileResult
	diags   []Diagnostic
	dropped int
	// commandTools are the tool names of the set's commands once loaded,
	// for knownTool.
	commandTools map[string]bool
	// asked records knownTool's answers while one file is parsed.
	asked map[string]bool
}

// newLoader starts a load through fsys; opts must have its defaults.
func newLoader(fsys assetFS, dataDir string, opts Options) *loader {
	return &loader{fs: fsys, dataDir: dataDir, opts: opts, now: opts.Now(), next: map[string]*fileResult{}}
}

// knownTool answers a workflow step's tool name (see Options.KnownTools)
// and records the answer for the file being parsed.
func (l *loader) knownTool(name string) bool {
	ok := l.toolKnown(name)
	if l.asked == nil {
		l.asked = map[string]bool{}
	}
	l.asked[name] = ok
	return ok
}

func (l *loader) toolKnown(name string) bool {
	if l.commandTools[name] {
		return true
	}
	return l.opts.KnownTools != nil && l.opts.KnownTools(name)
}

// sameAnswers reports whether every recorded tool answer still holds.
func (l *loader) sameAnswers(asked map[string]bool) bool {
	for name, ok := range asked {
		if l.toolKnown(name) != ok {
			return false
		}
	}
	return true
}

func (l *loader) diag(file string, line int, format string, args ...any) {
	if len(l.diags) >= l.opts.MaxDiagnostics {
		l.dropped++
		return
	}
	l.diags = append(l.diags, Diagnostic{File: file, Line: line, Reason: fmt.Sprintf(format, args...)})
}

func (l *loader) finishDiagnostics() []Diagnostic {
	for _, r := range l.next {
		for _, d := range r.diags {
			if len(l.diags) >= l.opts.MaxDiagnostics {
				l.dropped++
				continue
			}
			l.diags = append(l.diags, d)
		}
	}
	sort.Slice(l.diags, func(i, j int) bool {
		a, b := l.diags[i], l.diags[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Reason < b.Reason
	})
	if l.dropped > 0 {
		l.diags = append(l.diags, Diagnostic{File: ".", Reason: fmt.Sprintf("%d more diagnostics not shown (limit %d): fix the ones above and reload", l.dropped, l.opts.MaxDiagnostics)})
	}
	return l.diags
}

// parseFunc turns one file's bytes into an asset under a name, or
// diagnostics. It must not keep data unless it copies it: data is reused.
type parseFunc func(rel string, data []byte, src Source) (name string, asset any, diags []Diagnostic)

// file loads the regular file rel (relative to the data dir, '/'
// separated) through parse, or reuses the previous load's result when the
// file's stamp is unchanged. fi is the file's Lstat.
func (l *loader) file(rel string, fi fs.FileInfo, parse parseFunc) *fileResult {
	st := fileStamp{size: fi.Size(), mode: fi.Mode(), modTime: fi.ModTime().UnixNano()}
	if p, ok := l.prev[rel]; ok && p.stamp == st && l.sameAnswers(p.tools) {
		l.next[rel] = p
		return p
	}
	r := &fileResult{stamp: st}
	l.next[rel] = r
	refuse := func(line int, format string, args ...any) *fileResult {
		r.diags = []Diagnostic{{File: rel, Line: line, Reason: fmt.Sprintf(format, args...)}}
		return r
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(0, "is a symlink; assets must be regular files inside the data dir: replace the link with the file")
	case !fi.Mode().IsRegular():
		return refuse(0, "is not a regular file (%v); remove it", fi.Mode().Type())
	case fi.Size() > l.opts.MaxFileSize:
		return refuse(0, "is %d bytes, over the %d-byte limit for an asset file: shorten it or raise the limit", fi.Size(), l.opts.MaxFileSize)
	}
	data, err := readCapped(l.fs, rel, l.opts.MaxFileSize)
	if err != nil {
		return refuse(0, "%v", err)
	}
	if !utf8.Valid(data) {
		return refuse(invalidUTF8Line(data), "is not UTF-8 text: save it as UTF-8")
	}
	src := Source{File: rel, Hash: hashHex(data), LoadedAt: l.now}
	l.asked = nil
	r.name, r.asset, r.diags = parse(rel, data, src)
	r.tools, l.asked = l.asked, nil
	if len(r.diags) > 0 {
		r.name, r.asset = "", nil
	}
	return r
}

// readCapped reads rel through fsys, refusing anything that is not a
// regular file once opened and anything longer than max bytes (the file
// may have grown since it was stat'ed).
func readCapped(fsys assetFS, rel string, max int64) ([]byte, error) {
	f, err := fsys.open(rel)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("is not a regular file (%v); remove it", fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("is over the %d-byte limit for an asset file: shorten it or raise the limit", max)
	}
	return data, nil
}

func hashHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// invalidUTF8Line is the 1-based line of the first byte that is not UTF-8.
func invalidUTF8Line(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return 1 + bytes.Count(data[:i], []byte{'\n'})
		}
		i += n
	}
	return 0
}

// readDir lists dir (relative to the data dir) in batches, calling visit
// for each entry in name order within a batch, and stops after budget
// entries: a huge folder costs a bounded load. It reports whether dir
// exists, and errTooMany when the budget ran out before the folder did.
func (l *loader) readDir(dir string, budget *int, visit func(fs.DirEntry)) (exists bool, err error) {
	f, err := l.fs.open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return true, errors.New("is not a folder")
	}
	for {
		entries, err := rd.ReadDir(256)
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if *budget <= 0 {
				return true, errTooMany
			}
			*budget--
			visit(e)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			return true, nil
		}
		if err != nil {
			return true, err
		}
	}
}

var errTooMany = errors.New("too many entries")

// tooMany records that a kind's folder held more entries than the budget.
func (l *loader) tooMany(dir string) {
	l.diag(dir, 0, "holds more than %d entries; the rest are not loaded: remove files or raise the limit", l.opts.MaxFilesPerKind)
}

// hidden reports names editors and tools use for their own files
// (".git", ".#draft.md", ".DS_Store"): skipped without a diagnostic.
func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// named is a loaded file's claim on a name within one kind.
type named struct {
	key   string // the name compared for duplicates
	name  string // the name the asset is listed under
	tool  string // its tool's name when key compares that, else ""
	rel   string
	asset any
}

// collect turns the per-file results of one kind into its map. Two files
// claiming one name (compared by key) are both refused, each diagnostic
// naming the other file, so neither silently wins.
func collect[T any](l *loader, claims []named) map[string]T {
	byKey := map[string][]named{}
	for _, c := range claims {
		byKey[c.key] = append(byKey[c.key], c)
	}
	out := make(map[string]T, len(claims))
	for _, c := range claims {
		group := byKey[c.key]
		if len(group) == 1 {
			out[c.name] = c.asset.(T)
			continue
		}
		others := make([]string, 0, len(group)-1)
		for _, o := range group {
			if o.rel != c.rel {
				others = append(others, o.rel)
			}
		}
		as := ""
		if c.tool != "" {
			as = " (as the tool " + c.tool + ")"
		}
		l.diag(c.rel, 0, "name %q is also claimed%s by %s: both are refused; rename one", c.name, as, strings.Join(others, ", "))
	}
	return out
}

// digest hashes the set in a fixed order (see Snapshot.Digest).
func (s *Snapshot) digest() string {
	h := sha256.New()
	write := func(kind string, names []string, hash func(string) string) {
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "%s\x00%s\x00%s\n", kind, n, hash(n))
		}
	}
	write("skill", keys(s.Skills), func(n string) string { return s.Skills[n].Source.File + "\x00" + s.Skills[n].Source.Hash })
	write("command", keys(s.Commands), func(n string) string { return s.Commands[n].Source.File + "\x00" + s.Commands[n].Source.Hash })
	write("workflow", keys(s.Workflows), func(n string) string { return s.Workflows[n].Source.File + "\x00" + s.Workflows[n].Source.Hash })
	if s.Graph != nil {
		for _, n := range s.Graph.nodes {
			fmt.Fprintf(h, "note\x00%s\x00%s\x00%s\n", n.id, n.source.File, n.source.Hash)
		}
	}
	for _, d := range s.Diagnostics {
		fmt.Fprintf(h, "diag\x00%s\n", d)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func keys[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

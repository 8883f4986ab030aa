package agents_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of the repository starts with.
const module = "github.com/jido-bus/jido-bus"

// levels is the dependency line, lowest first:
//
//	cmd, e2e, examples, deploy → internal/bench → node → internal/frontdoor,
//	internal/delegate → projects, conversation/convapi → agents/runtime, conversation/views →
//	projections, conversation, cluster → agents, eventlog → bus → schemas →
//	internal/goroutines, internal/jsonenc, internal/jsplace, internal/testkit
//
// A package belongs to the home whose folder is the longest prefix of its
// path (conversation/views/x is conversation/views', agents/builtin is
// agents'). It may import the packages of its own home and of any lower
// level, nothing else: homes on one level are side by side and neither
// imports the other (the assistant in projects drives a conversation,
// convapi answers its verbs, node introduces them). docs/development.md
// (The layout) states the table and the line once for readers;
// TestLayoutDocIsTheLayers keeps it equal to levels.
var levels = [][]string{
	// Helpers every layer may use, importing nothing of the module: the
	// goroutine owner, JSON written as encoding/json writes it (the hot
	// paths' hand-written encoders), the wait for JetStream servers that
	// cannot yet place a replicated stream, and (from tests) the test
	// toolkit.
	{"internal/goroutines", "internal/jsonenc", "internal/jsplace", "internal/testkit"},
	{"schemas"},
	{"bus"},
	{"agents", "eventlog"},
	// cluster: which node owns which partition, on the JetStream log's
	// servers (it reads eventlog/jslog's settings errors).
	{"projections", "conversation", "cluster"},
	{"agents/runtime", "conversation/views"},
	{"projects", "conversation/convapi"},
	// The HTTP listener's checks before the gateways (it knows their
	// Caller); only the node puts it in front of them.
	// delegate: the assistant's delegate tool, joining the projects and
	// the conv.* service.
	{"internal/frontdoor", "internal/delegate"},
	{"node"},
	{"internal/bench"},
	// deploy: the compose images' probe and the compose smoke.
	{"cmd", "e2e", "examples", "deploy"},
}

// homeOf returns the home of package path rel (relative to the module)
// and its level, or "" when no home holds it.
func homeOf(rel string) (string, int) {
	best, level := "", -1
	for l, homes := range levels {
		for _, h := range homes {
			if (rel == h || strings.HasPrefix(rel, h+"/")) && len(h) > len(best) {
				best, level = h, l
			}
		}
	}
	return best, level
}

// imports returns, for each directory of the module holding non-test Go
// source, relative to the module, the module's packages its files import
// (relative too). It parses the files itself rather than asking go list,
// so that go test's cache sees every file read and a changed import runs
// the test again.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a module of its own (tools/)
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir = filepath.ToSlash(dir)
		if _, ok := graph[dir]; !ok {
			graph[dir] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if to, ok := strings.CutPrefix(p, module+"/"); ok {
				graph[dir] = append(graph[dir], to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// TestImportGraphFollowsTheLayers checks every import between the
// module's packages (their non-test source: a test may reach up to start
// what it tests) against levels: a sideways or upward import fails here,
// naming both ends.
func TestImportGraphFollowsTheLayers(t *testing.T) {
	edges := 0
	for from, tos := range imports(t, "..") {
		fromHome, fromLevel := homeOf(from)
		if fromHome == "" {
			t.Errorf("package %s belongs to no home: add its folder to levels here (and to the layout table)", from)
			continue
		}
		for _, to := range tos {
			edges++
			toHome, toLevel := homeOf(to)
			switch {
			case toHome == "":
				t.Errorf("%s imports %s, which belongs to no home", from, to)
			case toHome == fromHome:
			case toLevel == fromLevel:
				t.Errorf("%s (home %s) imports %s (home %s) beside it: homes of one level do not import each other; move what both need down a level", from, fromHome, to, toHome)
			case toLevel > fromLevel:
				t.Errorf("%s (home %s) imports %s (home %s) above it: layers point one way, down", from, fromHome, to, toHome)
			}
		}
	}
	if edges < 100 {
		t.Fatalf("found only %d imports between the module's packages; is the test running in agents/?", edges)
	}
}

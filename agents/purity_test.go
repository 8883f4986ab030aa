package agents_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pureDirs are the packages of the pure layer, the pure conversation
// among them. agents/runtime, which does the I/O, is deliberately not
// among them.
var pureDirs = []string{".", "builtin", "../conversation"}

// TestPureLayerSource scans the non-test source of the pure layer: no
// goroutines, no clock, no randomness, no NATS or Pebble imports.
func TestPureLayerSource(t *testing.T) {
	forbiddenImports := []string{"nats", "pebble", "math/rand", "crypto/rand", "os", "net", "sync"}
	forbiddenCalls := map[string]bool{
		"time.Now": true, "time.Since": true, "time.Until": true, "time.After": true,
		"time.AfterFunc": true, "time.Tick": true, "time.NewTimer": true, "time.NewTicker": true, "time.Sleep": true,
	}
	fset := token.NewFileSet()
	scanned := 0
	for _, dir := range pureDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			scanned++
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbiddenImports {
					if p == bad || strings.HasPrefix(p, bad+"/") || strings.Contains(p, "/"+bad) || strings.Contains(p, bad+".") {
						t.Errorf("%s imports %s", path, p)
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.GoStmt:
					t.Errorf("%s: starts a goroutine", fset.Position(x.Pos()))
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && forbiddenCalls[id.Name+"."+x.Sel.Name] {
						t.Errorf("%s: uses %s.%s", fset.Position(x.Pos()), id.Name, x.Sel.Name)
					}
				}
				return true
			})
		}
	}
	if scanned < 10 {
		t.Fatalf("scanned only %d files; is the test running in agents/?", scanned)
	}
}

// TestPureLayerDependencies checks the whole import graph, not just direct
// imports: nothing the pure layer depends on may pull in NATS or Pebble.
func TestPureLayerDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".", "./builtin", "../conversation").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed only %d packages", len(deps))
	}
	for _, p := range deps {
		if strings.Contains(p, "nats-io") || strings.Contains(p, "pebble") {
			t.Errorf("the pure layer depends on %s", p)
		}
	}
}

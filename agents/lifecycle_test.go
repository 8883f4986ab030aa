package agents_test

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stopSignatures are the two ways a long-lived type of the module stops
// (docs/development.md, Conventions): Shutdown(ctx) error where it waits
// for work in flight, Close() error where there is nothing to wait for.
var stopSignatures = map[string]string{
	"Shutdown": "func(ctx context.Context) error",
	"Close":    "func() error",
}

// TestOneLifecycleVocabulary: every method named Shutdown or Close in the
// module's non-test source has its one signature, so that a caller never
// has to learn how a component stops (Node.Close(time.Duration),
// Engine.Shutdown() and a test cluster's Shutdown() each differed).
// Stopping one of many things (Runtime.Stop(ctx, id, reason),
// Engine.CloseProject) takes another name.
func TestOneLifecycleVocabulary(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != ".." {
				return filepath.SkipDir // a module of its own (tools/)
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			want, ok := stopSignatures[fn.Name.Name]
			if !ok {
				continue
			}
			checked++
			var b strings.Builder
			if err := printer.Fprint(&b, fset, fn.Type); err != nil {
				return err
			}
			got := strings.Replace(b.String(), "(err error)", "error", 1)
			if got != want {
				t.Errorf("%s: %s.%s is %s; a component stops with Shutdown(ctx context.Context) error or Close() error", fset.Position(fn.Pos()), recvName(fn.Recv), fn.Name.Name, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("found only %d Shutdown or Close methods; is the test running in agents/?", checked)
	}
}

// recvName is the receiver's type, without its star.
func recvName(l *ast.FieldList) string {
	e := l.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if g, ok := e.(*ast.IndexExpr); ok {
		e = g.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

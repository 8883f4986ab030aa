package agents_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxNodeLines bounds node/'s non-test Go source: the node assembles the
// concerns and nothing else, so code that grows it belongs to one of
// them (docs/development.md, The layout).
const maxNodeLines = 2000

// TestNodeOnlyAssembles keeps node/ small enough to be wiring, and keeps
// it from answering anything on NATS itself but ping (in node.go): every
// other verb and subject is answered by its concern's Serve.
func TestNodeOnlyAssembles(t *testing.T) {
	files, err := filepath.Glob("../node/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines == 0 {
		t.Fatal("no Go source in ../node; is the test running in agents/?")
	}
	if lines > maxNodeLines {
		t.Errorf("node/ has %d non-test Go lines, over %d: it assembles a node and nothing else; move what grew it to the package of its concern", lines, maxNodeLines)
	}

	// Every Handle*/Subscribe call anywhere in node/'s source, and in
	// node.go the only one allowed: ping's.
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(src, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			// NATS handlers: the bus's HandleAPI*, HandleSignals and
			// nats.Conn's Subscribe family (the metrics and health HTTP
			// endpoints are the node's own, and are not on NATS).
			m := sel.Sel.Name
			if !strings.HasPrefix(m, "HandleAPI") && m != "HandleSignals" && !strings.Contains(m, "Subscribe") {
				return true
			}
			if filepath.Base(name) == "node.go" && m == "HandleAPI" && len(call.Args) > 0 && isPingSubject(call.Args[0]) {
				return true
			}
			t.Errorf("%s: node/ registers a handler itself (%s): let the package of its concern Serve it", name, m)
			return true
		})
	}
}

// isPingSubject says whether x is n.subjects.Ping().
func isPingSubject(x ast.Expr) bool {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Ping"
}

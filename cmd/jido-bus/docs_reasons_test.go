package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// errorReason is one error type a reply, a dead letter or a recorded
// outcome may carry: a Reason… constant of the module with a string value.
type errorReason struct {
	pkg, value, doc string
}

// reasonValue is the form of an error type: a machine word.
var reasonValue = regexp.MustCompile(`^[a-z][a-z_]*$`)

// errorReasons reads every exported Reason… string constant declared in
// the module's non-test sources under root (constants that only alias
// another package's are that package's), sorted by package and value.
func errorReasons(root string) ([]errorReason, error) {
	var out []errorReason
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "e2e", "cmd", "examples", "node_modules", "tools", "bin", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Reason") || !name.IsExported() || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					value, err := strconv.Unquote(lit.Value)
					if err != nil || !reasonValue.MatchString(value) || seen[value] {
						continue
					}
					seen[value] = true
					doc := vs.Comment.Text()
					if doc == "" {
						doc = vs.Doc.Text()
					}
					if doc == "" && len(gen.Specs) == 1 {
						doc = gen.Doc.Text()
					}
					doc = strings.TrimPrefix(oneParagraph(doc), name.Name+": ")
					doc = strings.TrimPrefix(strings.TrimPrefix(doc, name.Name+" "), "is ")
					out = append(out, errorReason{pkg: pkg, value: value, doc: doc})
				}
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].pkg != out[j].pkg {
			return out[i].pkg < out[j].pkg
		}
		return out[i].value < out[j].value
	})
	return out, err
}

// writeReasons writes the error types as a table, by the package that
// gives them.
func writeReasons(b *bytes.Buffer, reasons []errorReason) {
	b.WriteString("## Error types\n\n")
	b.WriteString("Every `error.type` a reply, a dead letter (`jido-dlq-reason`) or a recorded outcome may carry, by the package that gives it; ")
	b.WriteString("[signals.md](signals.md#refusal-reasons) says which to retry.\n\n")
	b.WriteString("| type | given by | meaning |\n|---|---|---|\n")
	for _, r := range reasons {
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", r.value, r.pkg, strings.ReplaceAll(r.doc, "|", `\|`))
	}
	b.WriteString("\n")
}

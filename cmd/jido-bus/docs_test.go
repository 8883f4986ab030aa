package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The reference pages under docs/ that come from the code: docs/cli.md is
// written from the command tree (go test ./cmd/jido-bus -run TestDocs
// -update-docs, or make docs), and docs/configuration.md, written by hand,
// must name every serve flag and config key. So neither can drift from
// the binary.

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli.md from the command tree")

func docsPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDocsCLI: docs/cli.md is what the command tree says.
func TestDocsCLI(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/you")
	generatedPage(t, "cli.md", cliReference(newRootCmd()), "the commands")
}

// generatedPage checks that docs/name is got, what source says, or with
// -update-docs (make docs) writes it.
func generatedPage(t *testing.T, name, got, source string) {
	t.Helper()
	path := docsPath(t, name)
	if *updateDocs {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("docs/%s is not what %s say: run make docs and commit it", name, source)
	}
}

// cliReference renders every command of root as one Markdown page.
func cliReference(root *cobra.Command) string {
	var b bytes.Buffer
	b.WriteString("# The jido-bus command line\n\n")
	b.WriteString("Generated from the commands themselves (`make docs`); `jido-bus COMMAND --help` prints the same.\n\n")
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		all = append(all, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	for _, c := range all {
		if c == root {
			continue
		}
		fmt.Fprintf(&b, "- [`%s`](#%s) — %s\n", c.CommandPath(), slug(c.CommandPath()), c.Short)
	}
	b.WriteString("\n")
	common := commonFlags(all)
	if len(common) > 0 {
		b.WriteString("## Flags many commands share\n\n")
		b.WriteString("The commands that reach a node take these, as the NATS CLI does (each from its flag, else its variable, else the selected `nats context`); a command's own table below leaves them out.\n\n")
		var rows []string
		for _, f := range common {
			rows = append(rows, flagRow(f))
		}
		sort.Strings(rows)
		b.WriteString("| flag | default | what |\n| --- | --- | --- |\n" + strings.Join(rows, "\n") + "\n\n")
	}
	for _, c := range all {
		fmt.Fprintf(&b, "## %s\n\n", c.CommandPath())
		long := strings.TrimSpace(c.Long)
		if long == "" {
			long = c.Short
		}
		b.WriteString(long + "\n\n")
		if c.Runnable() {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
		}
		if ex := strings.TrimRight(c.Example, "\n "); ex != "" {
			fmt.Fprintf(&b, "Examples:\n\n```sh\n%s\n```\n\n", dedent(ex))
		}
		if fl := flagTable(c.NonInheritedFlags(), common); fl != "" {
			b.WriteString(fl + "\n")
		}
	}
	return b.String()
}

// commonFlags are the flags at least 5 commands have with the same
// usage (the connection flags), listed once.
func commonFlags(all []*cobra.Command) map[string]*pflag.Flag {
	count := map[string]int{}
	first := map[string]*pflag.Flag{}
	for _, c := range all {
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			k := f.Name + "\x00" + f.Usage
			count[k]++
			if first[k] == nil {
				first[k] = f
			}
		})
	}
	out := map[string]*pflag.Flag{}
	for k, n := range count {
		if f := first[k]; n >= 5 && f.Name != "help" && !f.Hidden {
			out[k] = f
		}
	}
	return out
}

func flagTable(fs *pflag.FlagSet, common map[string]*pflag.Flag) string {
	var rows []string
	shared := false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		if common[f.Name+"\x00"+f.Usage] != nil {
			shared = true
			return
		}
		rows = append(rows, flagRow(f))
	})
	var b strings.Builder
	if len(rows) > 0 {
		b.WriteString("| flag | default | what |\n| --- | --- | --- |\n" + strings.Join(rows, "\n") + "\n")
	}
	if shared {
		b.WriteString("\nAnd the [flags many commands share](#flags-many-commands-share).\n")
	}
	return b.String()
}

func flagRow(f *pflag.Flag) string {
	name := "`--" + f.Name + "`"
	if f.Shorthand != "" {
		name = "`-" + f.Shorthand + "`, " + name
	}
	def := f.DefValue
	switch def {
	case "", "[]", "false", "0", "0s":
		def = ""
	default:
		def = "`" + def + "`"
	}
	return fmt.Sprintf("| %s | %s | %s |", name, def, strings.ReplaceAll(f.Usage, "|", `\|`))
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

// TestDocsConfigurationIsComplete: docs/configuration.md names every flag
// of serve and every key of its --config file.
func TestDocsConfigurationIsComplete(t *testing.T) {
	data, err := os.ReadFile(docsPath(t, "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	serve, _, err := newRootCmd().Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	serve.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		if !strings.Contains(doc, "`--"+f.Name) && !strings.Contains(doc, ", `--"+f.Name+"`") && !regexp.MustCompile("--"+regexp.QuoteMeta(f.Name)+`\b`).MatchString(doc) {
			t.Errorf("docs/configuration.md does not name serve --%s", f.Name)
		}
	})
	keys, fields := yamlKeys(reflect.TypeOf(serveFile{}), "")
	named := func(k string) bool { return strings.Contains(doc, "`"+k+"`") || strings.Contains(doc, "`"+k+".") }
	for _, k := range keys {
		// A nested key may be named by its last part beside its parent.
		parent, leaf := "", k
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			parent, leaf = k[:i], k[i+1:]
		}
		if !named(k) && !(parent != "" && named(parent) && strings.Contains(doc, "`"+leaf+"`")) {
			t.Errorf("docs/configuration.md does not name the config key %s", k)
		}
	}
	sort.Strings(fields)
	for _, f := range fields {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(f) + `\b`).MatchString(doc) {
			t.Errorf("docs/configuration.md does not name %s, a member of a list in the config file", f)
		}
	}
}

// yamlKeys lists the dotted keys of a config struct (nested structs
// joined with '.') and, apart, the member names of its lists' elements.
func yamlKeys(t reflect.Type, prefix string) (keys, members []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		keys = append(keys, key)
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct:
			k, m := yamlKeys(ft, key+".")
			keys, members = append(keys, k...), append(members, m...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			k, m := yamlKeys(ft.Elem(), "")
			members = append(append(members, k...), m...)
		}
	}
	return keys, members
}

// TestDocsLinks: every relative link of the README and docs/ reaches a
// file of the checkout, and its #anchor a heading there.
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	headingsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		data, err := os.ReadFile(path)
		if err == nil {
			inCode := false
			for _, l := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(l, "```") {
					inCode = !inCode
				}
				if !inCode && strings.HasPrefix(l, "#") {
					a[slug(strings.TrimLeft(l, "# "))] = true
				}
			}
		}
		anchors[path] = a
		return a
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: no such file", rel, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !headingsOf(path)[frag] {
				t.Errorf("%s: link %s: no heading with that anchor", rel, target)
			}
		}
	}
}

// slug is GitHub's anchor of a Markdown heading: lower case, spaces to
// '-', punctuation other than '-' and '_' dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

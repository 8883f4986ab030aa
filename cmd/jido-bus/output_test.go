package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.uber.org/goleak"
)

// dataCommands are the commands that print data: each takes -o json and
// --json, and documents its JSON shape in its help.
var dataCommands = []string{
	"agent start", "agent stop", "agent state", "agent list", "agent call", "agent cast", "agent await",
	"log streams", "log show", "log tail", "log export", "log verify", "log truncate", "log import", "log replay",
	"conv ls", "conv show", "conv fork", "conv send", "conv follow",
	"projection ls", "projection rebuild", "projection get",
	"schema ls", "schema show",
	"top", "bench",
}

func findCmd(t *testing.T, root *cobra.Command, path string) *cobra.Command {
	t.Helper()
	c, rest, err := root.Find(strings.Fields(path))
	if err != nil || len(rest) != 0 || c.CommandPath() != "jido-bus "+path {
		t.Fatalf("no command %q: %v", path, err)
	}
	return c
}

func TestEveryDataCommandHasOutputJSON(t *testing.T) {
	root := newRootCmd()
	for _, path := range dataCommands {
		c := findCmd(t, root, path)
		o := c.Flags().Lookup("output")
		if o == nil || o.Shorthand != "o" {
			t.Errorf("%s: no -o/--output", path)
		}
		if c.Flags().Lookup("json") == nil {
			t.Errorf("%s: no --json", path)
		}
		if !strings.Contains(c.Long, "With -o json") {
			t.Errorf("%s: the help does not say what -o json prints:\n%s", path, c.Long)
		}
	}
}

func TestOutputFlagRefusesUnknownFormat(t *testing.T) {
	defer goleak.VerifyNone(t)
	out, err := runRoot(t, "schema", "ls", "-o", "yaml")
	if err == nil || !strings.Contains(err.Error(), "want table or json") {
		t.Fatalf("-o yaml: %v\n%s", err, out)
	}
}

// listShape decodes the list shape {"<name>":[…],"next":…}, failing when
// the list is missing or null or when next is missing.
func listShape(t *testing.T, out, name string) ([]json.RawMessage, json.RawMessage) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		t.Fatalf("no list %q in %s", name, out)
	}
	next, ok := m["next"]
	if !ok {
		t.Fatalf("no next in %s", out)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("%s is not a list: %v", name, err)
	}
	return items, next
}

func TestListShapesOnDataDir(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	local := []string{"--data-dir", dir}

	out, _, err := runLog(t, "", append([]string{"streams", "-o", "json"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	if items, next := listShape(t, out, "streams"); len(items) != 2 || string(next) != "null" {
		t.Errorf("log streams -o json: %s", out)
	}

	// log show: a page that stops before the end says where to go on.
	out, _, err = runLog(t, "", append([]string{"show", "agent/a", "--limit", "2", "-o", "json"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	if items, next := listShape(t, out, "entries"); len(items) != 2 || string(next) != "3" {
		t.Errorf("log show --limit 2 -o json: next %s, %d entries:\n%s", next, len(items), out)
	}
	out, _, err = runLog(t, "", append([]string{"show", "agent/a", "--from", "3", "--json"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	if items, next := listShape(t, out, "entries"); len(items) != 1 || string(next) != "null" {
		t.Errorf("log show --from 3: next %s, %d entries:\n%s", next, len(items), out)
	}
	out, _, err = runLog(t, "", append([]string{"show", "agent/a", "--limit", "2"}, local...)...)
	if err != nil || !strings.Contains(out, "continue with --from 3") {
		t.Errorf("log show --limit 2 (table) does not say more rows exist: %v\n%s", err, out)
	}
	out, _, err = runLog(t, "", append([]string{"show", "agent/a", "--limit", "3"}, local...)...)
	if err != nil || strings.Contains(out, "continue with") {
		t.Errorf("log show of the whole stream says more follows: %v\n%s", err, out)
	}
	// An empty read is [] too.
	out, _, err = runLog(t, "", append([]string{"show", "agent/a", "--type", "nothing.matches", "-o", "json"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	if items, _ := listShape(t, out, "entries"); len(items) != 0 {
		t.Errorf("log show --type nothing: %s", out)
	}

	// log tail without -f is a list too; its next is where -f would go on.
	out, _, err = runLog(t, "", append([]string{"tail", "agent/a", "-n", "2", "-o", "json"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	if items, next := listShape(t, out, "entries"); len(items) != 2 || string(next) != "4" {
		t.Errorf("log tail -o json: %s", out)
	}

	// log verify: nothing damaged is [], not null.
	out, _, err = runLog(t, "", append([]string{"verify", "-o", "json"}, local...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"damaged":[]`) {
		t.Errorf("log verify -o json: %s", out)
	}

	out, err = runRoot(t, "schema", "ls", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if items, _ := listShape(t, out, "schemas"); len(items) < 16 {
		t.Errorf("schema ls -o json: %s", out)
	}
}

// TestLogRefusesNegativeCounts: a negative --limit or -n is a typo, not
// "everything".
func TestLogRefusesNegativeCounts(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	local := []string{"--data-dir", dir}
	for _, args := range [][]string{{"show", "agent/a", "--limit", "-1"}, {"tail", "agent/a", "-n", "-3"}} {
		out, _, err := runLog(t, "", append(args, local...)...)
		if err == nil || !strings.Contains(err.Error(), "want 0") || out != "" {
			t.Errorf("log %v: %v\n%s", args, err, out)
		}
	}
}

// TestLogTailNothing: -n 0 prints no entry (a read's limit 0 would be a
// default page) and says where following would start.
func TestLogTailNothing(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	out, _, err := runLog(t, "", "tail", "agent/a", "-n", "0", "-o", "json", "--data-dir", dir)
	if err != nil || out != "{\"entries\":[],\"next\":4}\n" {
		t.Errorf("log tail -n 0: %v\n%s", err, out)
	}
}

func TestListShapeNamesTheListFirst(t *testing.T) {
	var b strings.Builder
	if err := writeList(&b, "streams", []int(nil), nil); err != nil || b.String() != "{\"streams\":[],\"next\":null}\n" {
		t.Errorf("writeList: %v %q", err, b.String())
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"a b c", 3, "a b\nc"},
		{"  a\n  b  ", 10, "a b"},
		{"abcdef g", 3, "abcdef\ng"},
		{"", 5, ""},
	} {
		if got := wrap(tc.in, tc.width); got != tc.want {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

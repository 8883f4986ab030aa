package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// Every command that prints data prints it one of two ways: a table (or a
// few lines of text) for a person, the default, or JSON for a program with
// -o json (--json is its alias). The JSON of a command is one value of one
// shape, documented in its --help:
//
//   - a list is an object holding the list under a plural name and the
//     cursor that continues it, null when nothing follows:
//     {"agents":[…],"next":"…"}; an empty list is [], never null;
//   - anything else is one object;
//   - a follower that keeps printing (log tail -f, conv follow, top) prints
//     one JSON object per line, and says so.
//
// The helpers below are the one place those rules are kept.

// outputFormat is the value of -o/--output; it sets the bool the command
// reads, the same one --json sets, so either spelling works and the last
// one given wins.
type outputFormat struct{ json *bool }

func (o outputFormat) String() string {
	if o.json != nil && *o.json {
		return "json"
	}
	return "table"
}

func (o outputFormat) Set(s string) error {
	switch strings.ToLower(s) {
	case "json":
		*o.json = true
	case "table", "text":
		*o.json = false
	default:
		return fmt.Errorf("%q: want table or json", s)
	}
	return nil
}

func (o outputFormat) Type() string { return "table|json" }

// addOutputFlags registers -o/--output and its alias --json on cmd, both
// setting *asJSON.
func addOutputFlags(cmd *cobra.Command, asJSON *bool) {
	cmd.Flags().VarP(outputFormat{json: asJSON}, "output", "o", "output format: table or json (the JSON shape is in this help)")
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON: the same as -o json")
}

// documentJSON appends the shape of cmd's JSON output to its help.
func documentJSON(cmd *cobra.Command, shape string) *cobra.Command {
	text := wrap("With -o json (or --json) it prints "+shape, 76)
	if cmd.Long == "" {
		cmd.Long = cmd.Short + "."
	}
	cmd.Long = strings.TrimRight(cmd.Long, "\n") + "\n\n" + text
	return cmd
}

// wrap joins text's words into lines of at most width bytes (a longer
// word gets a line of its own).
func wrap(text string, width int) string {
	var b strings.Builder
	line := 0
	for _, w := range strings.Fields(text) {
		switch {
		case line == 0:
		case line+1+len(w) > width:
			b.WriteByte('\n')
			line = 0
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeList writes the list shape: {"<name>":[…],"next":…}. items must be
// a slice (nil prints []); next is the cursor that continues the list, or
// nil when nothing follows.
func writeList(w io.Writer, name string, items any, next any) error {
	if v := reflect.ValueOf(items); v.Kind() == reflect.Slice && v.IsNil() {
		items = reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	if s, ok := next.(string); ok && s == "" {
		next = nil
	}
	// The list first, then its cursor, as the help shows it.
	list, err := json.Marshal(items)
	if err != nil {
		return err
	}
	cursor, err := json.Marshal(next)
	if err != nil {
		return err
	}
	key, _ := json.Marshal(name)
	_, err = fmt.Fprintf(w, "{%s:%s,\"next\":%s}\n", key, list, cursor)
	return err
}

// table is a tab-aligned table with a header line.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	fmt.Fprintln(t.tw, strings.Join(header, "\t"))
	return t
}

// row adds one line: each cell printed with %v.
func (t *table) row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

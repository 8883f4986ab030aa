package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/schemas"
)

// newSchemaCmd lists and prints the built-in JSON Schemas: the lifecycle
// signals, the log form of each directive, and their shared definitions.
func newSchemaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "List and print the JSON Schemas of built-in signals and directives",
		Long: `jido-bus describes every built-in signal (jido.agent.error, jido.cron_tick, ...)
and the log form of every directive (directive.emit, directive.spawn_agent, ...)
with a JSON Schema (draft 2020-12). These commands show them; they need no
running server.`,
	}
	cmd.AddCommand(newSchemaLsCmd(), newSchemaShowCmd())
	return cmd
}

func newSchemaLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the schemas by kind and name",
		Example: `  jido-bus schema ls
  jido-bus schema ls -o json | jq -r '.schemas[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := schemas.Builtin()
			if err != nil {
				return err
			}
			entries := reg.Entries()
			if asJSON {
				return writeList(cmd.OutOrStdout(), "schemas", entries, nil)
			}
			w := newTable(cmd.OutOrStdout(), "KIND", "NAME", "TITLE")
			for _, e := range entries {
				w.row(e.Kind, e.Name, e.Title)
			}
			return w.flush()
		},
	}
	addOutputFlags(cmd, &asJSON)
	documentJSON(cmd, `{"schemas":[{"name","kind","title","description"}…],"next":null}.`)
	return cmd
}

func newSchemaShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print one schema",
		Long: `Print the schema named NAME, a signal type (jido.agent.child.exit) or a
directive schema (directive.emit), as indented JSON. 'jido-bus schema ls'
lists the names.`,
		Example: `  jido-bus schema show jido.agent.error
  jido-bus schema show directive.spawn_agent`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := schemas.Builtin()
			if err != nil {
				return err
			}
			s, ok := reg.Lookup(args[0])
			if !ok {
				return exitError{code: exitNotFound, err: fmt.Errorf("no schema named %q; 'jido-bus schema ls' lists them", args[0])}
			}
			var out bytes.Buffer
			if asJSON {
				if err := json.Compact(&out, s.Source()); err != nil {
					return fmt.Errorf("schema %s: %w", args[0], err)
				}
				out.WriteByte('\n')
				_, err = cmd.OutOrStdout().Write(out.Bytes())
				return err
			}
			if err := json.Indent(&out, s.Source(), "", "  "); err != nil {
				return fmt.Errorf("schema %s: %w", args[0], err)
			}
			out.WriteByte('\n')
			_, err = cmd.OutOrStdout().Write(out.Bytes())
			return err
		},
	}
	addOutputFlags(cmd, &asJSON)
	documentJSON(cmd, `the schema itself on one line (without it, indented).`)
	return cmd
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// assetKinds are the kinds 'project assets --kind' takes.
var assetKinds = []string{"skill", "command", "workflow", "note"}

func newProjectAssetsCmd() *cobra.Command {
	var (
		f          liveFlags
		kind, name string
	)
	cmd := &cobra.Command{
		Use:   "assets ID",
		Short: "List a project's skills, commands, workflows and notes, or print one",
		Long: `List a project's skills, commands, workflows and skill graph notes, or
only one kind with --kind; with --kind and --name print that one asset.`,
		Example: `  jido-bus project assets web
  jido-bus project assets web --kind command
  jido-bus project assets web --kind skill --name review -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kind != "" && !slices.Contains(assetKinds, kind) {
				return fmt.Errorf("--kind %q: want one of %s", kind, strings.Join(assetKinds, ", "))
			}
			if name != "" && kind == "" {
				return fmt.Errorf("--name %q needs --kind (%s)", name, strings.Join(assetKinds, ", "))
			}
			var reply projectapi.AssetsReply
			if err := projectRequest(cmd, &f, projectapi.VerbAssets, projectapi.AssetsRequest{Project: args[0], Kind: kind, Name: name}, &reply); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f.json {
				return writeJSON(w, reply)
			}
			if reply.Asset != nil {
				return writeIndented(w, reply.Asset)
			}
			t := newTable(w, "KIND", "NAME", "DESCRIPTION", "FILE")
			for _, s := range reply.Skills {
				t.row("skill", s.Name, oneLine(s.Description), s.Source.File)
			}
			for _, c := range reply.Commands {
				t.row("command", c.Name, oneLine(c.Description), c.Source.File)
			}
			for _, wf := range reply.Workflows {
				t.row("workflow", wf.Name, oneLine(wf.Description), wf.Source.File)
			}
			for _, n := range reply.Notes {
				t.row("note", n, "", "")
			}
			return t.flush()
		},
	}
	f.register(cmd)
	documentJSON(cmd, `one object: {"skills":[…],"commands":[…],"workflows":[…],"notes":["name"…],"digest","version"} (a kind left out when --kind names another), or with --name {"asset":{…},"digest","version"}.`)
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind: "+strings.Join(assetKinds, ", "))
	cmd.Flags().StringVar(&name, "name", "", "print the asset of --kind with this name")
	_ = cmd.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(assetKinds, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newProjectDiagnosticsCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "diagnostics ID",
		Short: "Print the problems found loading a project's assets (file:line: reason)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var reply projectapi.DiagnosticsReply
			if err := projectRequest(cmd, &f, projectapi.VerbDiagnostics, projectapi.ProjectRequest{Project: args[0]}, &reply); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f.json {
				return writeList(w, "diagnostics", reply.Diagnostics, nil)
			}
			for _, d := range reply.Diagnostics {
				if _, err := fmt.Fprintln(w, d.String()); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"diagnostics":[{"file","line","reason"}…],"next":null}.`)
	return cmd
}

// printChanges prints a reload's changes, one line per asset: + added,
// ~ changed, - removed, ! a diagnostic.
func printChanges(w io.Writer, c assets.Changes) {
	for _, k := range []struct {
		kind string
		d    assets.KindDiff
	}{{"skill", c.Skills}, {"command", c.Commands}, {"workflow", c.Workflows}, {"note", c.Notes}} {
		for _, line := range []struct {
			mark  string
			names []string
		}{{"+", k.d.Added}, {"~", k.d.Changed}, {"-", k.d.Removed}} {
			for _, n := range line.names {
				fmt.Fprintf(w, "  %s %s %s\n", line.mark, k.kind, n)
			}
		}
	}
	for _, d := range c.Diagnostics {
		fmt.Fprintf(w, "  ! %s\n", d)
	}
}

// oneLine is s on one line, cut to fit a table.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects/projectapi"
)

func newProjectReloadCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "reload ID",
		Short: "Reload a project's assets and policy file now (the watcher does it on changes)",
		Long: `Reload a project's assets and read its policy file (.jido/policy.yaml)
again now, and print what changed. A project whose watcher runs does both
by itself when a file under .jido changes; this is for a node started
without watching, or to be sure.

A policy file that does not load (not YAML, an unknown key, a bad glob),
asks for more than the node's operator allows, or is a symlink is not
taken: the policy in force stays, and the reason is printed, logged in
the project's stream (project.policy.refused) and listed by 'project
diagnostics'. A project opened with --policy does not follow the file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var reply projectapi.ReloadReply
			if err := projectRequest(cmd, &f, projectapi.VerbReload, projectapi.ProjectRequest{Project: args[0]}, &reply); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f.json {
				return writeJSON(w, reply)
			}
			printReload(w, reply)
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `one object: {"project":{…as 'project get'},"changed":bool,"changes":{"skills":{"added","changed","removed"},"commands":{…},"workflows":{…},"notes":{…},"diagnostics":[…]},
"policy":{"source","changed":bool,"changes":["tools.run_command: allow -> ask",…],"refused":"why the file was not taken","ignored":"why the file is not read"}}.`)
	return cmd
}

// printReload says what a reload changed: the assets (as printChanges),
// then the policy.
func printReload(w io.Writer, r projectapi.ReloadReply) {
	id, pol := r.Project.ID, r.Policy
	switch {
	case r.Changed:
		fmt.Fprintf(w, "project %s: reloaded, version %d\n", id, r.Project.Version)
		printChanges(w, r.Changes)
	case pol.Changed:
		fmt.Fprintf(w, "project %s: assets unchanged (version %d)\n", id, r.Project.Version)
	default:
		fmt.Fprintf(w, "project %s: nothing changed (version %d)\n", id, r.Project.Version)
	}
	switch {
	case pol.Changed:
		fmt.Fprintf(w, "policy: changed, now %s\n", pol.Source)
		for _, c := range pol.Changes {
			fmt.Fprintf(w, "  ~ %s\n", c)
		}
	case pol.Refused != "":
		fmt.Fprintf(w, "policy: the file was not taken; the policy in force (%s) stays: %s\n", pol.Source, pol.Refused)
	case pol.Ignored != "":
		fmt.Fprintf(w, "policy: %s: %s\n", pol.Source, pol.Ignored)
	}
}

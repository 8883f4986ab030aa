package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/eventlog"
)

// newLogMigrateCmd is `jido-bus log migrate`: rewrite a stopped node's
// event log into another key layout, above all back into the one the
// builds before layout 2 read.
func newLogMigrateCmd() *cobra.Command {
	var (
		dataDir string
		to      int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "migrate --to-layout N",
		Short: "Rewrite a stopped node's event log into another key layout (to go back to an older build)",
		Long: fmt.Sprintf(`Rewrite the event log of a data directory into key layout N, in place.
No node may be running on the directory.

Layout %d is this build's (each entry stored once); every command that
opens a log in layout 1 upgrades it anyway, so --to-layout %d only does that
ahead of time. Layout 1 is the one the builds before 2026-11-28 read
('jido-bus version' prints "log format: 1"): they refuse layout %d
("unknown key layout"). To go back to such a build, stop the node, run
this with --to-layout 1, then start the older build.
Nothing is lost either way; a log in layout 1 takes about twice the space.

The rewrite goes in synced batches and can be interrupted: a log left
half-way is opened by no older build, and this build's next command
upgrades it back to layout %d, after which the downgrade can be run again.
'jido-bus version' prints the layout a build writes ("log format").`, eventlog.FormatVersion, eventlog.FormatVersion, eventlog.FormatVersion, eventlog.FormatVersion),
		Example: `  # going back to a build of log format 1
  jido-bus log migrate --to-layout 1 --data-dir /var/lib/jido-bus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("to-layout") {
				return fmt.Errorf("give --to-layout: 1 for the builds of log format 1 (before 2026-11-28), %d for this one", eventlog.FormatVersion)
			}
			if !cmd.Flags().Changed("data-dir") {
				dir, note, err := defaultDataDir(os.Getenv)
				if err != nil {
					return err
				}
				if note != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), note)
				}
				dataDir = dir
			}
			rep, err := eventlog.MigrateLayout(logDir(dataDir), eventlog.Options{}, to)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return fmt.Errorf("no event log in %s (%w): give --data-dir the directory a node ran with", dataDir, err)
			case errors.Is(err, eventlog.ErrLocked):
				return fmt.Errorf("the data dir %s is in use by a running node: stop it first, then migrate: %w", dataDir, err)
			case err != nil:
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSONLine(out, rep)
			}
			switch {
			case rep.From == rep.To && rep.Converted == 0:
				fmt.Fprintf(out, "the event log in %s is in layout %d already: nothing to do\n", dataDir, rep.To)
			case rep.To == 1:
				fmt.Fprintf(out, "the event log in %s is now in layout 1 (%d stream entries rewritten): the builds of log format 1 read it; this build upgrades it again when it next opens it\n", dataDir, rep.Converted)
			default:
				fmt.Fprintf(out, "the event log in %s is now in layout %d (%d stream entries rewritten)\n", dataDir, rep.To, rep.Converted)
			}
			if rep.Damaged > 0 {
				fmt.Fprintf(out, "%d damaged entries were left as they were: run jido-bus log verify --data-dir %s\n", rep.Damaged, dataDir)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&to, "to-layout", 0, fmt.Sprintf("the key layout to rewrite the log into: 1 (the builds before 2026-11-28) or %d (this one's)", eventlog.FormatVersion))
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the data directory of the stopped node (default "+dataDirHelp+")")
	addOutputFlags(cmd, &asJSON)
	documentJSON(cmd, `{"from":N,"to":N,"converted":N,"damaged":N}.`)
	return cmd
}

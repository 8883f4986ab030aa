package main

import (
	"github.com/spf13/cobra"
)

// newLogCmd is `jido-bus log`: read, export, import, verify and truncate
// the event log, through a running node or directly on its data directory.
func newLogCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Inspect and maintain the event log",
		Long: `Inspect and maintain the event log: the streams of CloudEvents that
jido-bus commits before it acts.

Streams are named by '/'-separated segments: agent/<agent-id>,
conversation/<project>/<conversation>, project/<id>, dlq.

` + sourceHelp,
	}
	cmd.AddCommand(
		newLogStreamsCmd(),
		newLogShowCmd(),
		newLogTailCmd(),
		newLogEmitsCmd(),
		newLogExportCmd(),
		newLogImportCmd(),
		newLogVerifyCmd(),
		newLogTruncateCmd(),
		newLogReplayCmd(),
		newLogMigrateCmd(),
	)
	return cmd
}

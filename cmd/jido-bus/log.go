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

Every subcommand first asks a running node over NATS (--nats-url, the
jido.api.log.* subjects) and, when none answers, opens the log in
--data-dir itself. A running node holds a lock on its data directory, so
with a node running, go through NATS.

Streams are named by '/'-separated segments: agent/<agent-id>,
conversation/<project>/<conversation>, project/<id>, dlq.`,
	}
	cmd.AddCommand(
		newLogStreamsCmd(),
		newLogShowCmd(),
		newLogTailCmd(),
		newLogExportCmd(),
		newLogImportCmd(),
		newLogVerifyCmd(),
		newLogTruncateCmd(),
		newLogReplayCmd(),
	)
	return cmd
}

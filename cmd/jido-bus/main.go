// Command jido-bus runs and inspects a jido-bus node: an embedded NATS
// server, the Pebble event log and the agents on top of them.
//
// Each subcommand lives in its own file and is registered in newRootCmd.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/node"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jido-bus:", err)
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "jido-bus",
		Short: "An event-sourced agent runtime on NATS and Pebble",
		Long: `jido-bus runs Jido-style agents on a message bus. Signals are CloudEvents on
NATS subjects; each agent is an actor whose decisions are committed to a
Pebble log before they are acted on; projections fold the log back into
read models.

Start a node with 'jido-bus serve'; publish signals with any NATS client.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newServeCmd(),
		newAgentCmd(),
		newLogCmd(),
		newSchemaCmd(),
		newProjectionCmd(),
		newConvCmd(),
		newBenchCmd(),
		newTopCmd(),
	)
	return root
}

// exitError carries a process exit code other than 1 (for example 2 for a
// verification that found damage) through cobra.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// defaultDataDir is where every command that reads or writes data looks
// unless --data-dir says otherwise.
const defaultDataDir = "./data"

// logDir is where the event log lives inside a data directory.
func logDir(dataDir string) string { return node.LogDir(dataDir) }

// addDataDirFlag registers the --data-dir flag that every command touching
// the data directory shares.
func addDataDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "data-dir", defaultDataDir, "directory holding the event log (created if missing)")
}

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

	"github.com/jido-bus/jido-bus/bus"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted && errors.Is(err, context.Canceled) && !errors.As(err, new(exitError)) {
		// Ctrl-C (or SIGTERM) ended a command that was waiting: that is
		// the user's doing, not an error to explain. A follower ends
		// quietly with 0 by itself; serve returns its own exit codes.
		fmt.Fprintln(os.Stderr, "jido-bus: interrupted")
		os.Exit(exitInterrupted)
	}
	if ee, ok := errors.AsType[exitError](err); ok && ee.quiet {
		os.Exit(ee.code) // said already, or nothing to say
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jido-bus:", err)
		os.Exit(exitCode(err))
	}
}

// Exit codes, for scripts: see the root command's help. serve has its own
// (exitLogFailed).
const (
	exitOK          = 0
	exitFailed      = 1 // any other error
	exitDamage      = 2 // a verification found damage
	exitNotFound    = 3 // the agent, stream or object does not exist
	exitUnreachable = 4 // no NATS server, no TLS connection, no node, or no answer in time
	exitForbidden   = 5 // refused credentials, or a role that does not allow it
	// exitInterrupted is the shell's code for a command ended by SIGINT.
	exitInterrupted = 130
)

// exitCode maps err to the process's exit code: an exitError's own code,
// else by the type of the *bus.Error in its chain (the node's reply, or
// what the connection and request client made of a NATS failure).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if ee, ok := errors.AsType[exitError](err); ok {
		return ee.code
	}
	if be, ok := errors.AsType[*bus.Error](err); ok {
		switch be.Type {
		case bus.ReasonNotFound:
			return exitNotFound
		case bus.ReasonUnavailable:
			return exitUnreachable
		case bus.ReasonForbidden:
			return exitForbidden
		}
	}
	return exitFailed
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "jido-bus",
		Short: "An event-sourced agent runtime on NATS and Pebble",
		Long: `jido-bus runs Jido-style agents on a message bus. Signals are CloudEvents on
NATS subjects; each agent is an actor whose decisions are committed to a
Pebble log before they are acted on; projections fold the log back into
read models.

Start a node with 'jido-bus serve'; publish signals with any NATS client.

` + connHelp + `

Exit codes: 0 ok; 1 an error; 2 a verification found damage (log verify,
log replay --verify); 3 not found (the agent, stream or conversation does
not exist); 4 unreachable or timed out (no NATS server, no node answering,
a TLS connection that cannot be made: a server certificate not trusted
without --tlsca, a client certificate required without --tlscert; no
answer within --timeout); 5 forbidden (credentials refused, or the
user's role does not allow the request); 130 interrupted (Ctrl-C) while
waiting for an answer. serve differs: 3 means the event
log failed to write and the node stopped (a supervisor should restart it
once the disk is usable), 1 any other failure.`,
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
		newVersionCmd(),
		newSandboxExecCmd(),
		newProjectCmd(),
		newMCPCmd(),
		newClusterCmd(),
	)
	addCompletions(root)
	return root
}

// exitError carries a process exit code other than 1 (for example 2 for a
// verification that found damage) through cobra.
type exitError struct {
	code int
	err  error
	// quiet: main prints nothing (the user left conv chat with Ctrl-C).
	quiet bool
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

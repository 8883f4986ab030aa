package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// logBackend is what the log subcommands need: a running server's API
// (logapi.Client) or the data directory opened in this process
// (logapi.Local).
type logBackend interface {
	Streams(context.Context, logapi.StreamsRequest) (logapi.StreamsReply, error)
	Read(context.Context, logapi.ReadRequest) (logapi.ReadReply, error)
	Import(context.Context, logapi.ImportRequest) (logapi.ImportReply, error)
	Verify(context.Context, logapi.VerifyRequest) (eventlog.VerifyReport, error)
	Truncate(context.Context, logapi.TruncateRequest) (logapi.TruncateReply, error)
}

var (
	_ logBackend = logapi.Client{}
	_ logBackend = logapi.Local{}
)

// logFlags are the flags every log subcommand shares: the connection
// flags (connFlags) naming a running node, and --data-dir naming a data
// directory; pickSource says which one a command reads.
type logFlags struct {
	connFlags
	dataDir string
	// dataDirNote says why the default data dir is the one it is (the old
	// ./data found in the working directory), for the line that says it
	// is read.
	dataDirNote string
	json        bool
	// follower, when set, makes the connection to a node reconnect for
	// ever, telling it (stderr) when it is lost and back (connFlags.followerOptions).
	follower io.Writer
	cmd      *cobra.Command // for stderr
}

func (f *logFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	f.connFlags.register(cmd)
	addOutputFlags(cmd, &f.json)
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "use this data directory and no node (without it: the default node, else "+dataDirHelp+")")
}

// connectTimeout bounds the attempt to reach a running node before falling
// back to the data directory.
const connectTimeout = 500 * time.Millisecond

// openBackend opens what the command reads (pickSource): the data
// directory, or a running node's API. create says whether a missing data
// directory may be created (import) or is an error (everything that only
// reads). The returned close function releases what was opened.
func (f *logFlags) openBackend(ctx context.Context, create bool) (logBackend, func(), error) {
	src, err := f.pickSource()
	if err != nil {
		return nil, nil, err
	}
	var noNode error
	if !src.dataDir {
		opts := []nats.Option{nats.Timeout(connectTimeout), nats.NoReconnect(), nats.Name("jido-bus log")}
		if f.follower != nil {
			opts = append(append([]nats.Option{nats.Timeout(connectTimeout)}, f.followerOptions(f.follower, "log")...), nats.Name("jido-bus log follower"))
		}
		nc, subjects, none, err := f.reachNode(src, opts, func(nc *nats.Conn, subjects bus.Subjects) error {
			client := logapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout, Denials: f.denials}
			probe, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := client.Streams(probe, logapi.StreamsRequest{Prefix: "\x00"})
			// A role that may not list streams (a client's) still reaches a
			// served log: the verb asked for then gets its own answer, and a
			// refusal names that verb, not this probe.
			if bus.ErrorType(err) == bus.ReasonForbidden {
				return nil
			}
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		if nc != nil {
			return logapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout, Denials: f.denials}, nc.Close, nil
		}
		noNode = none
	}
	if !create {
		if err := f.checkLogDir(noNode); err != nil {
			return nil, nil, err
		}
	}
	l, err := eventlog.Open(logDir(f.dataDir), eventlog.Options{})
	if errors.Is(err, eventlog.ErrLocked) {
		return nil, nil, f.lockedError(err)
	}
	if err != nil {
		return nil, nil, err
	}
	guard := func(_ context.Context, req logapi.TruncateRequest) error {
		return runtime.CheckTruncate(l, req.Stream, req.Before)
	}
	return logapi.Local{Log: l, Guard: guard}, func() { _ = l.Close() }, nil
}

// checkLogDir refuses a data directory without an event log: not_found
// for one the user named, and for the default the reason no node was
// read either (noNode).
func (f *logFlags) checkLogDir(noNode error) error {
	if _, err := os.Stat(logDir(f.dataDir)); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if noNode != nil {
		return fmt.Errorf("%w, and there is no event log in %s to open instead (set --data-dir)", noNode, f.dataDir)
	}
	return bus.Errorf(bus.ReasonNotFound, "no event log in %s (%s does not exist): give --data-dir the directory a node ran with (its --data-dir)", f.dataDir, logDir(f.dataDir))
}

// lockedError says what to do with a data directory a running node
// holds.
func (f *logFlags) lockedError(err error) error {
	if f.changed("data-dir") {
		return fmt.Errorf("the data dir %s is in use by a running node: read it through that node (give -s/--server its URL instead of --data-dir), or stop the node first: %w", f.dataDir, err)
	}
	return fmt.Errorf("the data dir %s is in use by a running server that does not answer at %s under --prefix %s; point -s/--server and --prefix at it, or stop it first: %w", f.dataDir, f.url, f.prefix, err)
}

// isNoNode reports whether err, from reaching a node, means there is none to
// reach (no NATS server, or no node answering), so that opening the data
// directory is the right fallback. Refused credentials, a refused request,
// bad settings and everything else are errors to report instead.
func isNoNode(err error) bool {
	return bus.ErrorType(err) == bus.ReasonUnavailable
}

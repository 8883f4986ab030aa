package main

import (
	"context"
	"io"
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

// openBackend opens what the command reads (openSource) as the log API:
// a running node's (logapi.Client) or the data directory's, opened here
// (logapi.Local). create says whether a missing data directory may be
// created (import) or is an error (everything that only reads). The
// returned close function releases what was opened.
func (f *logFlags) openBackend(ctx context.Context, create bool) (logBackend, func(), error) {
	opts := []nats.Option{nats.Timeout(connectTimeout), nats.NoReconnect(), nats.Name("jido-bus log")}
	if f.follower != nil {
		opts = append(append([]nats.Option{nats.Timeout(connectTimeout)}, f.followerOptions(f.follower, "log")...), nats.Name("jido-bus log follower"))
	}
	src, err := f.openSource(ctx, opts, create, func(probe context.Context, nc *nats.Conn, subjects bus.Subjects) error {
		_, err := logapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout, Denials: f.denials}.Streams(probe, logapi.StreamsRequest{Prefix: "\x00"})
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
	if src.nc != nil {
		return logapi.Client{NC: src.nc, Subjects: src.subjects, Timeout: f.timeout, Denials: f.denials}, src.nc.Close, nil
	}
	l := src.log
	guard := func(_ context.Context, req logapi.TruncateRequest) error {
		return runtime.CheckTruncate(l, req.Stream, req.Before)
	}
	return logapi.Local{Log: l, Guard: guard}, func() { _ = l.Close() }, nil
}

// isNoNode reports whether err, from reaching a node, means there is none to
// reach (no NATS server, or no node answering), so that opening the data
// directory is the right fallback. Refused credentials, a refused request,
// bad settings and everything else are errors to report instead.
func isNoNode(err error) bool {
	return bus.ErrorType(err) == bus.ReasonUnavailable
}

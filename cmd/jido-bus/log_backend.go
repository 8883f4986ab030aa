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

// logFlags are the flags every log subcommand shares.
type logFlags struct {
	natsURL string
	prefix  string
	dataDir string
	json    bool
	timeout time.Duration
	// follower, when set, makes the connection to a node reconnect for
	// ever, telling it (stderr) when it is lost and back (followerOptions).
	follower io.Writer
}

func (f *logFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.natsURL, "nats-url", nats.DefaultURL, "NATS server of a running jido-bus node; tried first, then --data-dir")
	cmd.Flags().StringVar(&f.prefix, "prefix", bus.DefaultPrefix, "subject prefix the node serves under")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "how long to wait for each answer from the node")
	addOutputFlags(cmd, &f.json)
	addDataDirFlag(cmd, &f.dataDir)
}

// connectTimeout bounds the attempt to reach a running node before falling
// back to the data directory.
const connectTimeout = 500 * time.Millisecond

// openBackend reaches a running node at --nats-url, or else opens
// --data-dir. create says whether a missing data directory may be
// created (import) or is an error (everything that only reads). The
// returned close function releases what was opened.
func (f *logFlags) openBackend(ctx context.Context, create bool) (logBackend, func(), error) {
	subjects, err := bus.NewSubjects(f.prefix)
	if err != nil {
		return nil, nil, err
	}
	opts := []nats.Option{nats.Timeout(connectTimeout), nats.NoReconnect(), nats.Name("jido-bus log")}
	if f.follower != nil {
		opts = append(opts[:1], append(followerOptions(f.follower, "log", f.natsURL), nats.Name("jido-bus log follower"))...)
	}
	nc, err := nats.Connect(f.natsURL, opts...)
	if err == nil {
		client := logapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout}
		probe, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = client.Streams(probe, logapi.StreamsRequest{Prefix: "\x00"})
		cancel()
		if err == nil {
			return client, nc.Close, nil
		}
		nc.Close()
	}
	if !create {
		if _, statErr := os.Stat(logDir(f.dataDir)); errors.Is(statErr, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("no jido-bus node answers at %s and there is no event log in %s (set --nats-url or --data-dir)", f.natsURL, f.dataDir)
		}
	}
	l, err := eventlog.Open(logDir(f.dataDir), eventlog.Options{})
	if errors.Is(err, eventlog.ErrLocked) {
		return nil, nil, fmt.Errorf("the data dir %s is in use by a running server; point --nats-url at that server (no node answered at %s), or stop it first: %w", f.dataDir, f.natsURL, err)
	}
	if err != nil {
		return nil, nil, err
	}
	guard := func(_ context.Context, req logapi.TruncateRequest) error {
		return runtime.CheckTruncate(l, req.Stream, req.Before)
	}
	return logapi.Local{Log: l, Guard: guard}, func() { _ = l.Close() }, nil
}

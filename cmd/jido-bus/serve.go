package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/eventlog"
)

// serveConfig is everything `jido-bus serve` is told by its flags.
type serveConfig struct {
	listen       string
	natsURL      string
	dataDir      string
	prefix       string
	user         string
	password     string
	token        string
	noJetStream  bool
	maxDataBytes int
	logLevel     string
	logFormat    string
	drainTimeout time.Duration
}

func newServeCmd() *cobra.Command {
	var cfg serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a jido-bus node: embedded NATS, the event log, the agents",
		Long: `Run a jido-bus node.

By default the node starts an embedded NATS server (JetStream on) listening
on --listen, so the NATS CLI and any NATS client can reach it; with
--nats-url it connects to an existing NATS server instead. Data is kept in
--data-dir.

The node answers the control plane on <prefix>.api.… (try
'nats req jido.api.ping ""'), accepts signals on <prefix>.agent.<id>.<type>
and <prefix>.signal.<type>, and files every message it refuses on
<prefix>.dlq.<reason> with the reason, answering the sender when it waits
for a reply.

SIGINT or SIGTERM shuts the node down cleanly: it stops taking input,
drains what is in flight, flushes, and exits 0.`,
		Example: `  jido-bus serve
  jido-bus serve --listen 0.0.0.0:4222 --data-dir /var/lib/jido-bus --token s3cret
  jido-bus serve --nats-url nats://nats.internal:4222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("listen") && cfg.natsURL != "" {
				return errors.New("--listen and --nats-url exclude each other: --listen configures the embedded server, --nats-url replaces it")
			}
			return runServe(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.listen, "listen", "127.0.0.1:4222", "HOST:PORT the embedded NATS server listens on (port 0 picks a free one)")
	f.StringVar(&cfg.natsURL, "nats-url", "", "connect to this NATS server instead of starting an embedded one (nats://host:port)")
	addDataDirFlag(cmd, &cfg.dataDir)
	f.StringVar(&cfg.prefix, "prefix", bus.DefaultPrefix, "first token(s) of every jido-bus subject")
	f.StringVar(&cfg.user, "user", "", "user clients must give (embedded server), or give (--nats-url)")
	f.StringVar(&cfg.password, "password", "", "password that goes with --user")
	f.StringVar(&cfg.token, "token", "", "token clients must give (embedded server), or give (--nats-url); excludes --user")
	f.BoolVar(&cfg.noJetStream, "no-jetstream", false, "start the embedded server without JetStream")
	f.IntVar(&cfg.maxDataBytes, "max-data-bytes", bus.DefaultMaxDataBytes, "largest signal data accepted, in bytes")
	f.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&cfg.logFormat, "log-format", "text", "text or json")
	f.DurationVar(&cfg.drainTimeout, "drain-timeout", 10*time.Second, "how long shutdown waits for in-flight messages")
	return cmd
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

func runServe(ctx context.Context, cfg serveConfig) error {
	log, err := newLogger(cfg.logLevel, cfg.logFormat)
	if err != nil {
		return err
	}
	subjects, err := bus.NewSubjects(cfg.prefix)
	if err != nil {
		return fmt.Errorf("--prefix: %w", err)
	}
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}

	nc, natsURL, shutdownNATS, err := connectNATS(cfg, log)
	if err != nil {
		return err
	}
	defer shutdownNATS()

	limits := bus.Limits{MaxDataBytes: cfg.maxDataBytes}
	evlog, err := eventlog.Open(logDir(cfg.dataDir), eventlog.Options{Limits: limits, Logger: log})
	if errors.Is(err, eventlog.ErrLocked) {
		return fmt.Errorf("the data dir %s is in use by another jido-bus process; stop it or choose another --data-dir: %w", cfg.dataDir, err)
	}
	if err != nil {
		return fmt.Errorf("open the event log: %w", err)
	}
	defer func() {
		if err := evlog.Close(); err != nil {
			log.Error("close the event log", "err", err)
		}
	}()

	types := agents.NewRegistry()
	if err := builtin.Register(types); err != nil {
		return fmt.Errorf("register the built-in agent types: %w", err)
	}
	rt, err := runtime.New(runtime.Config{
		Store:    evlog,
		Types:    types,
		Dispatch: dispatch.Env{Conn: nc, Subjects: subjects, Logger: log},
		Logger:   log,
	})
	if err != nil {
		return err
	}
	recovered, err := rt.Recover(ctx)
	if err != nil {
		log.Error("some agents could not be recovered", "err", err)
	}
	n := &node{log: log, evlog: evlog, rt: rt, started: time.Now()}
	b := natsbus.New(nc, natsbus.Options{
		Subjects:     subjects,
		Limits:       limits,
		Logger:       log,
		OnDeadLetter: n.fileDeadLetter,
	})
	n.bus = b
	if err := n.register(); err != nil {
		_ = n.close()
		return err
	}
	log.Info("jido-bus ready", "nats", natsURL, "embedded", cfg.natsURL == "", "agents_recovered", recovered, "agent_types", types.Names(), "prefix", subjects.All(""), "data_dir", cfg.dataDir, "version", version)

	<-ctx.Done()
	log.Info("shutting down", "cause", context.Cause(ctx))
	if err := n.close(); err != nil {
		log.Warn("close", "err", err)
	}
	if err := drain(nc, cfg.drainTimeout); err != nil {
		log.Warn("drain NATS connection", "err", err)
	}
	log.Info("stopped")
	return nil
}

// connectNATS starts the embedded server (or dials --nats-url) and returns
// a connection and the function that stops what was started.
func connectNATS(cfg serveConfig, log *slog.Logger) (nc *nats.Conn, url string, stop func(), err error) {
	connOpts := []nats.Option{
		nats.Name("jido-bus serve"),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Error("NATS async error", "subject", subject, "err", err)
		}),
	}
	if cfg.natsURL != "" {
		switch {
		case cfg.token != "":
			connOpts = append(connOpts, nats.Token(cfg.token))
		case cfg.user != "":
			connOpts = append(connOpts, nats.UserInfo(cfg.user, cfg.password))
		}
		connOpts = append(connOpts, nats.MaxReconnects(-1))
		nc, err = nats.Connect(cfg.natsURL, connOpts...)
		if err != nil {
			return nil, "", nil, fmt.Errorf("connect to %s: %w (is the server running? leave out --nats-url to start an embedded one)", cfg.natsURL, err)
		}
		return nc, nc.ConnectedUrlRedacted(), nc.Close, nil
	}

	host, portStr, err := net.SplitHostPort(cfg.listen)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--listen %q: want HOST:PORT: %w", cfg.listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, "", nil, fmt.Errorf("--listen %q: port must be 0..65535", cfg.listen)
	}
	if port == 0 {
		port = natsserver.RandomPort
	}
	srv, err := natsserver.Start(natsserver.Options{
		Host:        host,
		Port:        port,
		User:        cfg.user,
		Password:    cfg.password,
		Token:       cfg.token,
		NoJetStream: cfg.noJetStream,
		StoreDir:    natsDir(cfg.dataDir),
		Logger:      log,
	})
	if err != nil {
		return nil, "", nil, err
	}
	nc, err = srv.Connect(connOpts...)
	if err != nil {
		srv.Shutdown()
		return nil, "", nil, err
	}
	return nc, srv.ClientURL(), func() { nc.Close(); srv.Shutdown() }, nil
}

// drain lets in-flight messages finish, flushes what was published, and
// closes nc, giving up after timeout.
func drain(nc *nats.Conn, timeout time.Duration) error {
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		return err
	}
	select {
	case <-closed:
		return nil
	case <-time.After(timeout):
		nc.Close()
		return fmt.Errorf("not drained after %s; closed", timeout)
	}
}

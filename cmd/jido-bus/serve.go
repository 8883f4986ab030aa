package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/node"
)

// serveConfig is everything `jido-bus serve` is told by its flags.
type serveConfig struct {
	listen        string
	natsURL       string
	dataDir       string
	prefix        string
	user          string
	password      string
	token         string
	noJetStream   bool
	maxDataBytes  int
	logLevel      string
	logFormat     string
	drainTimeout  time.Duration
	metrics       string
	acceptWALLoss bool
	webhookAllow  []string
	webhookPriv   []string
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
handles what NATS had already delivered, commits what the agents took
(within --drain-timeout; whatever is left then is refused "unavailable"
with a dead letter, never dropped), and exits 0.

If the event log cannot write (a full or failing disk), the node refuses
all input as "unavailable", reports it on ping, and exits 3, so that a
supervisor restarts it once disk space is freed; every acknowledged entry
is there after the restart.

If the event log's write-ahead log is damaged before its end (not just a
write torn by a crash), the node does not start: 'jido-bus log verify
--data-dir DIR' names the file and offset. Restore from a backup, or
start once with --accept-wal-loss to keep the entries before the damage
(the dropped part is copied to <data-dir>/log-damaged-wal/).`,
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
	f.StringVar(&cfg.metrics, "metrics", "", "serve Prometheus metrics on http://HOST:PORT/metrics (e.g. 127.0.0.1:9464), liveness on /healthz and readiness on /readyz (503 naming the failing check: log, recovery, nats); off when empty")
	f.DurationVar(&cfg.drainTimeout, "drain-timeout", 10*time.Second, "how long shutdown waits for in-flight messages")
	f.StringArrayVar(&cfg.webhookAllow, "webhook-allow", nil, "a destination webhooks may POST to: scheme://host[:port][/path], host may be *.domain (repeatable; none: every webhook is refused)")
	f.StringArrayVar(&cfg.webhookPriv, "webhook-allow-private", nil, "a network (CIDR) of private, loopback or link-local addresses webhooks may reach, e.g. 127.0.0.0/8 (repeatable)")
	f.BoolVar(&cfg.acceptWALLoss, "accept-wal-loss", false, "start even if the event log's write-ahead log is damaged, dropping the entries after the damage (they are copied aside)")
	return cmd
}

// exitLogFailed is serve's exit code when the event log failed to write.
const exitLogFailed = 3

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
	n, err := node.Start(ctx, node.Config{
		DataDir: cfg.dataDir,
		NATS: node.NATSConfig{
			Listen: cfg.listen, URL: cfg.natsURL,
			User: cfg.user, Password: cfg.password, Token: cfg.token,
			NoJetStream: cfg.noJetStream,
		},
		Prefix:        cfg.prefix,
		Limits:        bus.Limits{MaxDataBytes: cfg.maxDataBytes},
		Logger:        log,
		Version:       version,
		MetricsAddr:   cfg.metrics,
		AcceptWALLoss: cfg.acceptWALLoss,
		Webhooks:      dispatch.WebhookPolicy{Allow: cfg.webhookAllow, AllowPrivate: cfg.webhookPriv},
	})
	if err != nil {
		return err
	}
	var failed error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case <-n.Failed():
		failed = n.Log().Failed()
		log.Error("the event log failed; shutting down so that a supervisor restarts the node once the disk is usable", "err", failed)
	}
	if err := n.Close(cfg.drainTimeout); err != nil {
		log.Warn("shut down", "err", err)
	}
	log.Info("stopped")
	if failed != nil {
		return exitError{code: exitLogFailed, err: failed}
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
	"github.com/jido-bus/jido-bus/projects/policy"
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
	open          []string // projects to open at start: PATH or PATH=ID
	metrics       string
	acceptWALLoss bool

	configPath     string
	users          []node.User
	tls            node.TLSFiles
	insecure       bool
	webhooks       dispatch.WebhookPolicy
	listenFromFile bool     // the config file set listen
	secretFlags    []string // flags given that carry a secret (ps shows them)
	warnings       []string // what serve logs at start about its configuration
	notes          []string // what serve says at start that is not a warning (the data dir it chose)
	dataHome       bool     // the data dir is the per-user default, under a directory serve makes private

	http         node.HTTPConfig // the gateways' listener (serve --http)
	httpTokenEnv string          // the variable holding its token

	commandEnv    []string       // what commands may inherit (--command-env); nil: the default
	providerFlags []string       // --provider as given
	providers     []llm.Endpoint // the operator's model providers
	contextWindow int64          // the window of a model without one (0: llm.DefaultWindow)
	secretEnv     []string       // the variables holding the node's credentials

	emitStream         bool          // keep what agents emit in a JetStream stream (--emit-stream)
	cluster            serveCluster  // cluster mode (--cluster, serve_cluster.go)
	emitStreamMaxAge   time.Duration // 0: no age limit
	emitStreamMaxBytes policy.Size

	sandbox projects.SandboxConfig // what every project's commands may read, their caps (serve --sandbox-*, sandbox: in --config)
	// checkpointMax is --checkpoint-max-size as given, checkpointBytes
	// its value (serve_checkpoints.go).
	checkpointMax   string
	checkpointBytes int64

	mcpRemoteFlags []string             // --mcp-remote as given
	mcpRemotes     []projects.MCPRemote // the HTTP MCP servers projects may use (serve_mcp.go)
}

func newServeCmd() *cobra.Command {
	cmd, _ := newServeCmdConfig()
	return cmd
}

// newServeCmdConfig returns serve's command and the configuration its
// flags are parsed into.
func newServeCmdConfig() (*cobra.Command, *serveConfig) {
	var cfg serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a jido-bus node: embedded NATS, the event log, the agents",
		Long: `Run a jido-bus node.

By default the node starts an embedded NATS server (JetStream on) listening
on --listen, so the NATS CLI and any NATS client can reach it; with
--nats-url it connects to an existing NATS server instead. Data is kept in
--data-dir, by default ~/.local/share/jido-bus/node ($XDG_DATA_HOME/jido-bus/node):
outside the folders you work in, so that any of them can be opened as a
project (a project may not hold its node's data dir). A ./data holding a
log in the working directory, the default before, is still used when no
--data-dir is given, with a note saying so.

Who may do what: users with a role (admin, operator, client) from --config
FILE, enforced by the embedded server as NATS permissions; refusals are
dead letters on <prefix>.dlq.forbidden. Without users (or a token from
$JIDO_TOKEN, or an admin password from $JIDO_PASSWORD) the embedded server
listens on loopback only: a non-loopback --listen is refused unless
--insecure. Users other than admins must use their own inbox prefix
(nats --inbox-prefix _INBOX_<user>). Flags override the file; an unknown
key in the file is an error. See docs/security.md.

The node answers the control plane on <prefix>.api.… (try
'nats req jido.api.ping ""'), accepts signals on <prefix>.agent.<id>.<type>
and <prefix>.signal.<type>, and files every message it refuses on
<prefix>.dlq.<reason> with the reason, answering the sender when it waits
for a reply.

With --http HOST:PORT the node also serves its projects over HTTP: MCP on
/mcp and /mcp/<project>, A2A on /a2a/<project>/ (an A2A client given that
URL finds the agent card; the card and /healthz need no token). Clients
send "Authorization: Bearer <token>", the token read from
the variable --http-token-env names; without a token only a loopback
address is allowed. Browser pages must be listed with --http-allow-origin.

The node's secrets stay in the node. Commands a project runs inherit only
the variables --command-env names (default PATH,LANG,LC_ALL,TERM,TZ; a
project's policy chooses among them), never the node's credentials, a
provider's key or a JIDO_SECRET_* variable. Model providers are the
operator's: openai (key in $OPENAI_API_KEY) and anthropic
($ANTHROPIC_API_KEY), and more with --provider NAME=KIND,base_url=URL,
key_env=VAR; a project's .jido/config.yaml chooses one by name and a model.
Streamable-HTTP MCP servers are the operator's too: a project's
mcp_servers: reaches only a URL listed with --mcp-remote URL,bearer_env=VAR,
and the token in VAR goes to that host only.

With --cluster the node is one of several on a NATS cluster with
JetStream (--nats-url nats://a:4222,nats://b:4222,…, whose servers must
fsync every write: sync_interval always): the log is replicated there,
each node decides for the agents of the partitions it owns, and a node
that dies has its partitions taken by the others after --lease-timeout.
See docs/cluster.md.

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
		Example: `  # loopback only, no auth: a developer's machine
  jido-bus serve

  # on the network: users and roles from a file, TLS
  jido-bus serve --config /etc/jido-bus/jido.yaml

  # jido.yaml:
  #   listen: 0.0.0.0:4222
  #   data_dir: /var/lib/jido-bus
  #   users:
  #     - {name: ops,  password: '$2a$11$…', role: admin}     # nats server passwd
  #     - {name: app,  nkey: UDXU4RCS…,       role: client}
  #   tls: {cert: /etc/jido-bus/cert.pem, key: /etc/jido-bus/key.pem}
  # clients other than admins use their own inbox:
  #   nats --user app --password … --inbox-prefix _INBOX_app req jido.api.ping ''

  # one admin secret from the environment, never on the command line
  JIDO_TOKEN=$(cat /run/secrets/jido) jido-bus serve --listen 0.0.0.0:4222

  # a local model server projects may use (llm: {provider: local, model: llama3.1:8b})
  jido-bus serve --provider local=openai,base_url=http://127.0.0.1:11434/v1

  jido-bus serve --nats-url tls://nats.internal:4222 --tlsca ca.pem

  # one node of a cluster on three NATS servers with JetStream
  jido-bus serve --cluster --node-id n1 \
    --nats-url nats://a:4222,nats://b:4222,nats://c:4222 \
    --nats-monitor http://a:8222,http://b:8222,http://c:8222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resolved, err := resolveServeConfig(cmd, &cfg, os.Getenv)
			if err != nil {
				return err
			}
			return runServe(cmd.Context(), resolved)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.listen, "listen", "127.0.0.1:4222", "HOST:PORT the embedded NATS server listens on (port 0 picks a free one)")
	f.StringVar(&cfg.natsURL, "nats-url", "", "connect to this NATS server instead of starting an embedded one (nats://host:port)")
	addDataDirFlag(cmd, &cfg.dataDir)
	f.StringVar(&cfg.prefix, "prefix", bus.DefaultPrefix, "first token(s) of every jido-bus subject")
	f.StringVar(&cfg.configPath, "config", "", "YAML file of settings (listen, data_dir, prefix, users, tls, insecure, metrics, webhooks, http, commands, providers, context_window, sandbox, checkpoints, mcp_remotes, emit_stream, cluster); flags override it")
	f.StringVar(&cfg.user, "user", "", "the admin clients log in as (embedded server), or the user the node gives (--nats-url); env JIDO_USER, default admin; its password from $JIDO_PASSWORD")
	f.StringVar(&cfg.password, "password", "", "password of --user; prefer $JIDO_PASSWORD (ps shows command lines)")
	f.StringVar(&cfg.token, "token", "", "token of the one admin (embedded server; excludes users), or the token the node gives (--nats-url); prefer $JIDO_TOKEN")
	f.BoolVar(&cfg.insecure, "insecure", false, "let the embedded server listen on a non-loopback address without authentication (ping then warns)")
	f.StringVar(&cfg.tls.Cert, "tlscert", "", "TLS certificate (PEM) of the embedded server, or the node's client certificate for --nats-url")
	f.StringVar(&cfg.tls.Key, "tlskey", "", "private key (PEM) of --tlscert")
	f.StringVar(&cfg.tls.CA, "tlsca", "", "CA (PEM) that client certificates are verified against (embedded server), or that the --nats-url server's certificate is verified against")
	f.BoolVar(&cfg.noJetStream, "no-jetstream", false, "start the embedded server without JetStream")
	f.IntVar(&cfg.maxDataBytes, "max-data-bytes", bus.DefaultMaxDataBytes, "largest signal data accepted, in bytes")
	f.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&cfg.logFormat, "log-format", "text", "text or json")
	f.StringVar(&cfg.metrics, "metrics", "", "serve Prometheus metrics on http://HOST:PORT/metrics (e.g. 127.0.0.1:9464), liveness on /healthz and readiness on /readyz (503 naming the failing check: log, recovery, nats); off when empty")
	f.DurationVar(&cfg.drainTimeout, "drain-timeout", 10*time.Second, "how long shutdown waits for in-flight messages")
	f.StringArrayVar(&cfg.open, "open", nil, "open the project at PATH (or PATH=ID) once the node runs; one already open is left as it is (repeatable)")
	f.StringArrayVar(&cfg.webhooks.Allow, "webhook-allow", nil, "a destination webhooks may POST to: scheme://host[:port][/path], host may be *.domain (repeatable; none: every webhook is refused)")
	f.StringArrayVar(&cfg.webhooks.AllowPrivate, "webhook-allow-private", nil, "a network (CIDR) of private, loopback or link-local addresses webhooks may reach, e.g. 127.0.0.0/8 (repeatable)")
	addServeHTTPFlags(cmd, &cfg)
	addServeSecretFlags(cmd, &cfg)
	addServeSandboxFlags(cmd, &cfg)
	addServeCheckpointFlags(cmd, &cfg)
	addServeMCPFlags(cmd, &cfg)
	addServeEmitStreamFlags(cmd, &cfg)
	addServeClusterFlags(cmd, &cfg)
	f.BoolVar(&cfg.acceptWALLoss, "accept-wal-loss", false, "start even if the event log's write-ahead log is damaged, dropping the entries after the damage (they are copied aside)")
	return cmd, &cfg
}

// exitLogFailed is serve's exit code when the event log failed to write,
// or the node lost its place in its cluster: either way a supervisor
// should start it again.
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
	for _, w := range cfg.warnings {
		log.Warn(w)
	}
	for _, note := range cfg.notes {
		log.Info(note)
	}
	if cfg.dataHome {
		if err := makeDataHome(os.Getenv); err != nil {
			return err
		}
	}
	for _, f := range cfg.secretFlags {
		log.Warn(f+" on the command line is visible to every user of this machine (ps); set "+map[string]string{"--password": envPassword, "--token": envToken}[f]+" or use --config instead", "flag", f)
	}
	n, err := node.Start(ctx, node.Config{
		DataDir: cfg.dataDir,
		NATS: node.NATSConfig{
			Listen: cfg.listen, URL: cfg.natsURL,
			User: cfg.user, Password: cfg.password, Token: cfg.token,
			Users: cfg.users, TLS: cfg.tls, Insecure: cfg.insecure,
			NoJetStream: cfg.noJetStream,
		},
		Webhooks:           cfg.webhooks,
		Prefix:             cfg.prefix,
		Limits:             bus.Limits{MaxDataBytes: cfg.maxDataBytes},
		Logger:             log,
		Version:            version,
		MetricsAddr:        cfg.metrics,
		AcceptWALLoss:      cfg.acceptWALLoss,
		HTTP:               cfg.http,
		Sandbox:            cfg.sandbox,
		CheckpointMaxBytes: cfg.checkpointBytes,
		MCPRemotes:         cfg.mcpRemotes,
		Open:               openRequests(cfg.open),
		CommandEnv:         cfg.commandEnv,
		Providers:          cfg.providers,
		ContextWindow:      cfg.contextWindow,
		SecretEnv:          cfg.secretEnv,
		EmitStream:         cfg.emitStreamConfig(),
		Cluster:            cfg.clusterConfig(),
	})
	if err != nil {
		return err
	}
	logGateways(log, n)
	var failed error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case <-n.Failed():
		failed = n.Log().Failed()
		log.Error("the event log failed; shutting down so that a supervisor restarts the node once the disk is usable", "err", failed)
	case <-n.ClusterLost():
		failed = n.ClusterErr()
		log.Error("the node is no longer a member of its cluster; shutting down so that a supervisor starts it again", "err", failed)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
	defer cancel()
	if err := n.Shutdown(stopCtx); err != nil {
		log.Warn("shut down", "err", err)
	}
	log.Info("stopped")
	if failed != nil {
		return exitError{code: exitLogFailed, err: failed}
	}
	return nil
}

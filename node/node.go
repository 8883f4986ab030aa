// Package node assembles a running jido-bus node: NATS (embedded, or an
// external server), the event log, the agent runtime, the projections,
// the project engine, the conversations and every control-plane API,
// wired on one bus. `jido-bus serve` is a thin shell around it;
// benchmarks and tests start nodes in process with it.
//
// It assembles and nothing else: every verb and signal is answered by
// the package of its concern (agentapi, logapi, projectionapi, convapi,
// projectapi), each told by the node what it needs of the others
// (admission rules, hosts, hooks); the node's own are ping, its metrics
// and health, and the dead letters of what it refuses. Each part exports
// its own metrics and the node registers them; the NATS setup and roles
// are natsserver's, the cluster's partition hand-over runtime.Owner's,
// tool services projects/toolservice's. agents/layers_node_test.go keeps
// node/ under 2,000 lines and answering nothing on NATS but ping. It may import
// every package of the module below it (node → internal/frontdoor →
// projects, conversation/convapi → …); only cmd, internal/bench, e2e and
// examples import it (agents/layers_test.go checks both).
//
// Start order: data directory, NATS, log, agent types and runtime,
// recovery of the agents, interrupted conversations resumed, the open
// projects reopened, projections started (they catch up in the
// background), then the bus starts taking input. Shutdown reverses it: input
// stops first (what NATS already sent is still handled), then the agents
// commit what they took and the projections finish, NATS drains, the
// stores close.
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/cluster"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/dlq"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/internal/delegate"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
	"github.com/jido-bus/jido-bus/projects/projectapi"
	"github.com/jido-bus/jido-bus/projects/toolservice"
)

// Directories inside the data directory.

// LogDir is where the event log (Pebble) lives.
func LogDir(dataDir string) string { return filepath.Join(dataDir, "log") }

// NATSDir is where the embedded NATS server keeps its JetStream files.
func NATSDir(dataDir string) string { return filepath.Join(dataDir, "nats") }

// ProjectionsDir is where the projections keep their states and checkpoints.
func ProjectionsDir(dataDir string) string { return filepath.Join(dataDir, "projections") }

// DeadLetterStream is the log stream every refused input is appended to
// (dlq.Stream).
const DeadLetterStream = dlq.Stream

// ArtifactsDir is where large conversation payloads are stored.
func ArtifactsDir(dataDir string) string { return filepath.Join(dataDir, "artifacts") }

// Config configures a node. DataDir is required; the zero value of every
// other field is the default of `jido-bus serve`.
type Config struct {
	DataDir string
	NATS    NATSConfig
	// Prefix is the first token(s) of every subject; empty means "jido".
	Prefix string
	// Limits bound every signal; the zero value allows 1 MiB of data.
	Limits bus.Limits
	// NoSync acknowledges appends before they reach the disk: for
	// benchmarks and tests only, never for data anyone cares about.
	NoSync bool
	// Types registers agent types beside the built-in ones.
	Types func(*agents.Registry) error
	// Runtime adjusts the agent runtime's configuration before it starts
	// (tasks, executors, error policies).
	Runtime func(*runtime.Config)
	// MetricsAddr, when set, serves Prometheus metrics on
	// http://MetricsAddr/metrics.
	MetricsAddr string
	// Logger receives the node's log; nil discards it.
	Logger *slog.Logger
	// Version is reported by jido.api.ping.
	Version string
	// AcceptWALLoss opens an event log whose write-ahead log is damaged
	// before its end, dropping the entries after the damage (see
	// eventlog.Options.AcceptWALLoss); without it the node does not start.
	AcceptWALLoss bool
	// Webhooks is the operator's rule for the destinations of webhook
	// targets; the zero value allows none.
	Webhooks dispatch.WebhookPolicy
	// Projects adjusts the project engine's configuration before it
	// starts (watcher, limits, runner); nil keeps the defaults.
	Projects func(*projects.Config)
	// Sandbox is the operator's rules for every project's commands
	// (run_command): extra reads, hidden files, caps on the limits,
	// weaker confinement; the zero value is the strictest.
	Sandbox projects.SandboxConfig
	// CheckpointMaxBytes bounds the contents kept in DataDir/checkpoints
	// for conv rewind; 0 means checkpoint.DefaultMaxBytes.
	CheckpointMaxBytes int64
	// MCPRemotes are the streamable-HTTP MCP servers projects may use
	// (serve --mcp-remote); their token variables belong in SecretEnv.
	MCPRemotes []projects.MCPRemote
	// Open lists projects to open once the node runs, before it says it
	// is ready (serve --open); one already open on that root is left as
	// it is, so the same configuration serves again after a restart.
	Open []projects.OpenRequest
	// Assistant, when set, adjusts the configuration of the conversation
	// loop's executors (tests: a provider, a backoff).
	Assistant func(*assistant.Config)
	// HTTP configures the gateways' HTTP listener; off unless Listen.
	HTTP HTTPConfig
	// CommandEnv names the variables of the node's environment a
	// project's commands may inherit (serve --command-env); a project's
	// policy chooses among them. Nil means policy.DefaultCommandEnv. A
	// variable holding one of the node's secrets is refused at start.
	CommandEnv []string
	// Providers are the model providers the operator configured
	// (serve --provider), over llm.DefaultEndpoints; projects choose
	// among them by name.
	Providers []llm.Endpoint
	// ContextWindow is the context window, in tokens, of a model whose
	// provider gives it none (serve --context-window); 0 means
	// llm.DefaultWindow.
	ContextWindow int64
	// SecretEnv names more variables holding the node's credentials
	// (serve's --http-token-env and http.tokens variables), beside
	// CredentialEnv, the providers' key variables and JIDO_SECRET_*: none
	// reaches a command, and their values are scrubbed from what a
	// provider call returns.
	SecretEnv []string
	// EmitStream configures the JetStream stream that keeps what agents
	// emit (bus/emitstream); the zero value is off. Only the embedded
	// server with JetStream, or a cluster (Cluster), gets it: a single node
	// that connects to an existing server (NATS.URL) leaves that server's
	// streams alone.
	EmitStream emitstream.Config
	// Cluster, when set, runs the node as one of several on a NATS
	// cluster with JetStream (cluster.go); nil is a single node.
	Cluster *ClusterConfig

	logFS vfs.FS // tests: the event log's filesystem (nil: the OS's)
}

// Node is a running jido-bus node.
type Node struct {
	cfg      Config
	log      *slog.Logger
	subjects bus.Subjects
	conn     *natsserver.Conn
	evlog    *eventlog.Log
	rt       *runtime.Runtime
	store    *projections.Store
	runner   *projections.Runner
	bus      *natsbus.Bus
	cancel   context.CancelFunc
	runDone  chan error
	started  time.Time
	metrics  *metrics
	health   health
	dlq      *dlq.Writer
	webhooks *dispatch.WebhookGuard
	toolSvc  *toolservice.Services
	secrets  nodeSecrets
	projects *projects.Engine
	conv     *convapi.Service
	// delegations runs the assistant's delegate calls (set once conv is).
	delegations *delegate.Delegations
	convPub     *convapi.Publisher
	// assistant runs the conversation loop's LLM calls and tool runs;
	// engineReady is closed once projects is set (or failed to be).
	assistant   *assistant.Assistant
	engineReady chan struct{}

	// http is the gateways' listener, nil when off.
	http *httpServer

	recovered int
	// emitStream names the emit stream, "" when there is none.
	emitStream string
	// jslog is the replicated log in cluster mode (the runtime's store),
	// and member the node's place in the cluster; nil on a single node.
	jslog  *jslog.Log
	member atomic.Pointer[cluster.Member]
	// memberConn is the membership's own connection to NATS.
	memberConn *natsserver.Conn
	// filing is set once forbidden refusals can be filed as dead letters
	// (the bus and the dead-letter writer exist).
	filing atomic.Bool
}

// Start starts a node and returns once it takes input. When it fails it
// returns a nil Node and an error that says what to do, having released
// whatever it had opened.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("node: Config.DataDir is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	subjects, err := bus.NewSubjects(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("prefix: %w", err)
	}
	webhooks, err := dispatch.NewWebhookGuard(cfg.Webhooks)
	if err != nil {
		return nil, err
	}
	secrets, err := loadSecrets(cfg, os.Environ())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create the data dir %s: %w (choose a --data-dir this user can write)", cfg.DataDir, err)
	}
	n := &Node{cfg: cfg, log: log, subjects: subjects, started: time.Now(), runDone: make(chan error, 1), metrics: newMetrics(cfg.Version), webhooks: webhooks, secrets: secrets}
	// Every return below this point is nil, err on failure: n stays the
	// node being built, so releasing what it opened never meets a nil.
	ready := false
	defer func() {
		if !ready {
			stopCtx, cancel := context.WithTimeout(context.Background(), httpStopTimeout)
			_ = n.stopHTTP(stopCtx)
			_ = n.stopInput(stopCtx)
			cancel()
			_ = n.metrics.close()
			n.abort()
		}
	}()

	if n.conn, err = connect(cfg.NATS, subjects, NATSDir(cfg.DataDir), log, n.onViolation); err != nil {
		return nil, err
	}
	if cfg.Cluster == nil {
		// In a cluster the other nodes answer on the prefix too; the
		// membership refuses a node id already running instead.
		if err := natsbus.CheckPrefixFree(ctx, n.conn.NC, subjects, n.conn.URL); err != nil {
			return nil, err
		}
	} else if n.jslog, err = n.openClusterLog(ctx); err != nil {
		return nil, err
	}
	// Before recovery, which publishes again the emits a crash left
	// unconfirmed: the stream must be there to keep them.
	if (n.conn.Server != nil || cfg.Cluster != nil) && !cfg.NATS.NoJetStream && cfg.EmitStream.On {
		es := cfg.EmitStream
		if cfg.Cluster != nil {
			// Every node of a cluster makes (or checks) the one stream,
			// replicated as the log is.
			es.Replicas = cfg.Cluster.replicas()
		}
		if n.emitStream, err = emitstream.Ensure(ctx, n.conn.NC, subjects, es); err != nil {
			return nil, err
		}
	}
	n.evlog, err = eventlog.Open(LogDir(cfg.DataDir), eventlog.Options{Limits: cfg.Limits, Logger: log, NoSync: cfg.NoSync, AcceptWALLoss: cfg.AcceptWALLoss, FS: cfg.logFS})
	if errors.Is(err, eventlog.ErrLocked) {
		return nil, fmt.Errorf("the data dir %s is in use by another jido-bus process; stop it or choose another --data-dir: %w", cfg.DataDir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open the event log: %w", err)
	}
	// Conversation events are published from the log's head now, so
	// whatever recovery and resuming append is published too.
	if n.convPub, err = convapi.NewPublisher(n.evlog, subjects, n.conn.NC.PublishMsg, log); err != nil {
		return nil, fmt.Errorf("follow the event log for conversation events: %w", err)
	}
	n.convPub.Start()
	types, err := AgentTypes(cfg.Types)
	if err != nil {
		return nil, err
	}
	n.metrics.knowTypes(types.Names())
	// The listener comes up before recovery, which may take long: a
	// supervisor sees the process alive (/healthz) and not yet ready.
	if cfg.MetricsAddr != "" {
		evlog, nc := n.evlog, n.conn.NC
		url, err := n.metrics.serve(cfg.MetricsAddr, func() readiness { return n.health.check(evlog, nc) })
		if err != nil {
			return nil, err
		}
		log.Info("metrics", "url", url, "health", strings.TrimSuffix(url, "/metrics")+"/healthz", "ready", strings.TrimSuffix(url, "/metrics")+"/readyz")
	}

	// The bus and the dead-letter writer come before the runtime, which
	// files through them the signals it refuses (recovery may already).
	digestKey, err := dlq.LoadKey(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	n.dlq = dlq.NewWriter(n.evlog, cfg.Limits, log)
	n.bus = natsbus.New(n.conn.NC, natsbus.Options{
		Subjects:     subjects,
		Limits:       cfg.Limits,
		Logger:       log,
		OnDeadLetter: n.fileDeadLetter,
		OnRefused:    n.metrics.Refused,
		// Users with roles read their own inbox only, so an answer
		// anywhere else is one published for them with the node's rights.
		InboxReplies: cfg.NATS.RolesEnforced(),
		DigestKey:    digestKey,
	})
	if cfg.Cluster != nil {
		n.bus.SetPartitioner(n.busPartitioner())
	}
	n.filing.Store(true)
	rcfg := runtime.Config{
		Store:     n.evlog,
		Types:     types,
		Streams:   map[string]string{conversation.AgentType: "conversation", projects.AgentType: projects.StreamPrefix},
		Dispatch:  dispatch.Env{Conn: n.conn.NC, Subjects: subjects, Logger: log, Webhooks: webhooks},
		Logger:    log,
		Observer:  n.metrics,
		OnEmit:    func(string, *bus.Signal) { n.metrics.emitted.Add(1) },
		OnRefused: n.deadLetterRefused,
	}
	n.assistant = n.newAssistant()
	if rcfg.Directives, err = Directives(); err != nil {
		return nil, err
	}
	rcfg.Executors = n.assistant.Executors()
	if cfg.Cluster != nil {
		rcfg.Store, rcfg.Partitions = n.jslog, agentapi.LogPartitions(cfg.Cluster.partitions())
	}
	if cfg.Runtime != nil {
		cfg.Runtime(&rcfg)
	}
	if n.rt, err = runtime.New(rcfg); err != nil {
		return nil, err
	}
	if n.recovered, err = n.rt.Recover(ctx); err != nil {
		log.Error("some agents could not be recovered", "err", err)
	}
	if err := n.newProjects(); err != nil {
		return nil, err
	}

	if n.store, err = projections.OpenStore(ProjectionsDir(cfg.DataDir), projections.StoreOptions{Logger: log}); err != nil {
		return nil, fmt.Errorf("open the projection store: %w", err)
	}
	if n.runner, err = projections.NewRunner(n.evlog, n.store, projections.Options{Logger: log}, views.Projections(views.Options{})...); err != nil {
		return nil, err
	}
	if n.conv, err = convapi.New(convapi.Config{Runtime: n.rt, Log: n.evlog, Runner: n.runner, Projects: n.projects, Files: n.projects, InFlight: n.assistant.InFlight, Bus: n.bus, Logger: log}); err != nil {
		return nil, err
	}
	// Resuming folds each conversation's own stream, so it does not wait
	// for the projections to catch up; they do that in the background.
	n.conv.Resume(ctx, "the node restarted")
	n.delegations = delegate.New(n.conv, n.projects, log)
	delegate.Resume(n.rt, n.evlog, n.assistant, log)
	n.restoreProjects(ctx)
	if err := n.projects.OpenEach(ctx, cfg.Open); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() { n.runDone <- n.runner.Run(runCtx) }()

	if err := n.register(); err != nil {
		return nil, err
	}
	if cfg.Cluster != nil {
		if err := n.joinCluster(ctx); err != nil {
			return nil, err
		}
	}
	n.metrics.watch(n)
	if err := n.serveHTTP(cfg.HTTP); err != nil {
		return nil, err
	}
	// Ready only now: conversations resumed, projects reopened, and the
	// control plane answers; a 200 from /readyz before would send
	// requests that nothing serves yet.
	n.health.recovered.Store(true)
	log.Info("jido-bus ready", "nats", n.conn.URL, "embedded", n.conn.Server != nil, "agents_recovered", n.recovered,
		"agent_types", types.Names(), "prefix", subjects.All(""), "data_dir", cfg.DataDir, "emit_stream", n.emitStream, "version", cfg.Version)
	ready = true
	return n, nil
}

// AgentTypes returns the registry a node runs with: the built-in types
// (counter, calculator, conversation, project) and those extra registers.
func AgentTypes(extra func(*agents.Registry) error) (*agents.Registry, error) {
	types := agents.NewRegistry()
	if err := builtin.Register(types); err != nil {
		return nil, fmt.Errorf("register the built-in agent types: %w", err)
	}
	conv, err := conversation.NewAgent()
	if err != nil {
		return nil, err
	}
	if err := types.Register(conv); err != nil {
		return nil, err
	}
	project, err := projects.NewAgent()
	if err != nil {
		return nil, err
	}
	if err := types.Register(project); err != nil {
		return nil, err
	}
	if extra != nil {
		if err := extra(types); err != nil {
			return nil, fmt.Errorf("register agent types: %w", err)
		}
	}
	return types, nil
}

// URL is the NATS URL clients reach the node at.
func (n *Node) URL() string { return n.conn.URL }

// Conn is the node's own NATS connection.
func (n *Node) Conn() *nats.Conn { return n.conn.NC }

// Runtime is the node's agent runtime.
func (n *Node) Runtime() *runtime.Runtime { return n.rt }

// Log is the node's event log.
func (n *Node) Log() *eventlog.Log { return n.evlog }

// Failed returns a channel closed when the node can no longer work: its
// event log failed to write (a full or failing disk; n.Log().Failed()
// says why). From then on every input that must be committed is refused
// as unavailable and ping reports the failure; the owner should Close
// the node and exit non-zero, so that a supervisor restarts it once the
// disk is usable (the log comes back with every acknowledged entry).
func (n *Node) Failed() <-chan struct{} { return n.evlog.FailedNotify() }

// Conversations is the node's conversations: the conv API in process.
func (n *Node) Conversations() *convapi.Service { return n.conv }

// Projections is the node's projection runner.
func (n *Node) Projections() *projections.Runner { return n.runner }

// EmitStream is the name of the JetStream stream that keeps what agents
// emit, "" when the node has none (Config.EmitStream).
func (n *Node) EmitStream() string { return n.emitStream }

// Recovered is how many agents came back from the log at start.
func (n *Node) Recovered() int { return n.recovered }

// register subscribes every handler, control plane first.
func (n *Node) register() error {
	var err error
	if err = n.bus.HandleAPI(n.subjects.Ping(), n.ping); err != nil {
		return err
	}
	if n.toolSvc, err = toolservice.Start(toolservice.Config{Conn: n.conn.NC, Subjects: n.subjects, Engine: n.projects, Logger: n.log}); err != nil {
		return err
	}
	if err = logapi.Serve(n.bus, n.logAPI()); err != nil {
		return err
	}
	if err = emitapi.Serve(n.bus, emitapi.Local{Log: n.emitLog(), Subjects: n.subjects}); err != nil {
		return err
	}
	if err = projectionapi.Serve(n.bus, projectionapi.Local{Runner: n.runner}); err != nil {
		return err
	}
	agentOpts := agentapi.Options{
		Admit:          n.admitSignal,
		AdmitBroadcast: n.admitBroadcast,
		AdmitStart:     n.admitStart,
		Transient:      conversation.IsTransient,
		Refused:        n.metrics.Refused,
	}
	if n.cfg.Cluster != nil {
		list := n.clusterList()
		if err := list.Serve(); err != nil {
			return err
		}
		agentOpts.List = list.List
	}
	if err = agentapi.Serve(n.bus, n.rt, agentOpts); err != nil {
		return err
	}
	if err = convapi.Serve(n.bus, n.conv); err != nil {
		return err
	}
	if err = projectapi.Serve(n.bus, n.projects); err != nil {
		return err
	}
	return agentapi.ServeSignals(n.bus, n.rt, agentOpts)
}

// Shutdown stops the node without losing input it took: its
// subscriptions drain (the messages NATS has already sent it are
// handled), the agents commit what their inboxes hold (agents are not
// stopped: they come back on the next start) — both until ctx ends, past
// which what is left is refused with a dead letter — then the projections
// finish, NATS drains, the stores close. NATS gets as long to drain as
// ctx had left when Shutdown began (without a deadline, until the
// connection's own drain timeout), even once ctx has ended: the
// refusals made when it ended go out then.
func (n *Node) Shutdown(ctx context.Context) error {
	drainFor, bounded := time.Duration(0), false
	if deadline, ok := ctx.Deadline(); ok {
		drainFor, bounded = time.Until(deadline), true
	}
	// HTTP requests are input too: they stop first. A cluster's node
	// hands its partitions over before it stops taking input: what comes
	// in meanwhile goes to their new owners.
	errs := []error{n.stopHTTP(ctx), n.leaveCluster(ctx), n.stopInput(ctx), n.metrics.close()}
	_ = n.toolSvc.Close()
	if n.projects != nil {
		// Watchers stop before the agents they report to.
		_ = n.projects.Close()
	}
	if n.assistant != nil {
		// LLM calls and tools in flight stop unrecorded: the restart
		// records them interrupted.
		_ = n.assistant.Close()
	}
	if n.rt != nil {
		// Refusals go out on NATS and into the dlq stream, both still open.
		errs = append(errs, n.rt.Shutdown(ctx))
	}
	n.closeConvPublisher()
	drainCtx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if bounded {
		drainCtx, cancel = context.WithTimeout(drainCtx, drainFor)
	}
	defer cancel()
	if err := n.conn.Drain(drainCtx); err != nil {
		errs = append(errs, fmt.Errorf("drain NATS: %w", err))
	}
	n.abort()
	return errors.Join(errs...)
}

// closeConvPublisher publishes the conversation events committed by now
// and stops the publisher; it must run before NATS drains.
func (n *Node) closeConvPublisher() {
	if n.convPub != nil {
		_ = n.convPub.Close()
		n.convPub = nil
	}
}

// stopInput drains every subscription register made, signals and APIs
// alike (what NATS already sent is handled, within ctx), and cancels the
// requests still running (a verify of the log); once it returns no new
// input reaches the node.
func (n *Node) stopInput(ctx context.Context) error {
	if n.bus == nil {
		return nil
	}
	return n.bus.Shutdown(ctx)
}

// abort releases whatever Start got as far as opening, in reverse order.
func (n *Node) abort() {
	_ = n.toolSvc.Close()
	n.closeConvPublisher()
	if n.projects != nil {
		_ = n.projects.Close()
	}
	if n.assistant != nil {
		_ = n.assistant.Close()
	}
	if n.dlq != nil {
		_ = n.dlq.Close() // after NATS drained: no refusal is still being handled
	}
	if m := n.member.Swap(nil); m != nil {
		_ = m.Close()
	}
	n.closeMemberConn()
	if n.rt != nil {
		_ = n.rt.Shutdown(context.Background())
	}
	n.webhooks.CloseIdleConnections()
	if n.cancel != nil {
		n.cancel()
		if err := <-n.runDone; err != nil {
			n.log.Error("projections", "err", err)
		}
		n.cancel = nil
	}
	if n.store != nil {
		if err := n.store.Close(); err != nil {
			n.log.Error("close the projection store", "err", err)
		}
		n.store = nil
	}
	if n.evlog != nil {
		if err := n.evlog.Close(); err != nil {
			n.log.Error("close the event log", "err", err)
		}
		n.evlog = nil
	}
	if n.conn != nil {
		_ = n.conn.Close()
	}
}

// fileDeadLetter counts a refused input and queues it for the log stream
// "dlq", so dead letters outlive the NATS message that announced them.
func (n *Node) fileDeadLetter(d natsbus.DeadLetter) {
	n.metrics.deadLetters.WithLabelValues(d.Reason).Inc()
	n.dlq.File(d.Signal(n.cfg.Limits))
}

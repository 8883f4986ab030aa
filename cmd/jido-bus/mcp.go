package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

type mcpConfig struct {
	project, id, dataDir string
	logLevel, logFormat  string
	conn                 connFlags // --nats-url and the rest: a running node's project
}

func newMCPCmd() *cobra.Command {
	var cfg mcpConfig
	cmd := &cobra.Command{
		Use:   "mcp --project PATH",
		Short: "Serve one project over MCP on stdin/stdout (for an IDE or agent to launch)",
		Long: `mcp starts an embedded node (its NATS server on a free loopback port),
opens the project at PATH (or finds it already open there) and serves it as
an MCP server on stdin/stdout until stdin closes. stdout carries only MCP;
the node's log goes to stderr.

Its data (event log, the project's stream) is kept in --data-dir, by default
$XDG_DATA_HOME/jido-bus/mcp (~/.local/share/jido-bus/mcp). One node holds a
data dir at a time: give each concurrent server its own --data-dir.

Unless GOGC is set, it runs Go's garbage collector at GOGC=400: a tool
call allocates far more than the server keeps, and the default made the
collector a fifth of a call's CPU.

With --nats-url (or -s, or --context) it starts no node: it serves PATH
as a project of the running node there, found by its root in 'project ls'
or opened through the project API (which takes an operator user). PATH is
then a path on the node's machine. Over NATS a tool the policy marks ask is
refused (approval_required: approve it in a conversation or allow it), a
result's resource_link is not readable (no API serves artifacts), and the
node's project stream records the tool calls it runs (project.tool.*), not
each MCP request. NATS_URL alone does not switch the mode.

Register it with an MCP client as a command, e.g.
  claude mcp add myproject -- jido-bus mcp --project /path/to/project
  claude mcp add myproject -- jido-bus mcp --project /srv/proj --nats-url nats://node:4222

` + mcpConnHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.checkMode(); err != nil {
				return err
			}
			relaxGC()
			return runMCP(cmd.Context(), cfg, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.project, "project", "", "the project's folder (required)")
	f.StringVar(&cfg.id, "id", "", "the project's id when it is opened (default: a new id; a project already open on PATH keeps its own)")
	f.StringVar(&cfg.dataDir, "data-dir", "", "the embedded node's data dir, created if missing (default ~/.local/share/jido-bus/mcp: $XDG_DATA_HOME/jido-bus/mcp)")
	f.StringVar(&cfg.logLevel, "log-level", "warn", "debug, info, warn or error (to stderr)")
	f.StringVar(&cfg.logFormat, "log-format", "text", "text or json")
	cfg.conn.register(cmd)
	// No server is used unless one is named: the connection flags'
	// defaults would say otherwise.
	f.Lookup("server").Usage = "serve a project of the running node at this NATS server, nats://host:port[,…], instead of starting a node (no default: without -s, --nats-url or --context mcp starts its own)"
	f.Lookup("context").Usage = "serve a project of the running node this NATS CLI context names, instead of starting a node"
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// mcpConnHelp is connHelp as it holds for mcp: the connection settings
// only count once a node is named.
const mcpConnHelp = `Connection, once -s/--nats-url or --context names a running node: the
other settings (user, password, token, creds, nkey, TLS files) come from
their flag, else their environment variable (NATS_USER, NATS_PASSWORD,
NATS_TOKEN, NATS_CREDS, NATS_NKEY, NATS_CERT, NATS_KEY, NATS_CA), else
the NATS CLI context (--context, NATS_CONTEXT, or the one 'nats context
select' chose). There is no default server: NATS_URL, NATS_CONTEXT and the
context 'nats context select' chose are not used to pick one, since an
MCP client that launches mcp must get the project it was registered with,
not whatever node the environment points at. Prefer the variables (or a
context, or a creds file) for secrets: a flag is visible in 'ps'.`

// remote reports whether the flags name a running node to serve from.
func (c *mcpConfig) remote() bool {
	return c.conn.changed("server") || c.conn.changed("nats-url") || c.conn.changed("context")
}

// checkMode refuses flags of the other mode: --data-dir is the embedded
// node's, the connection flags a running node's. Silently ignoring either
// would serve another node than the one meant.
func (c *mcpConfig) checkMode() error {
	if c.remote() {
		if c.conn.changed("data-dir") {
			return errors.New("--data-dir is the embedded node's, and --nats-url serves a running node's project (its data stays with that node): drop one of them")
		}
		return nil
	}
	for _, name := range []string{"user", "password", "token", "creds", "nkey", "tlscert", "tlskey", "tlsca", "inbox-prefix", "prefix", "timeout"} {
		if c.conn.changed(name) {
			return fmt.Errorf("--%s is a connection setting and needs --nats-url (or -s, --context) naming the running node; without it mcp starts an embedded node", name)
		}
	}
	return nil
}

// mcpDataDir is the default data dir of jido-bus mcp: per user, so an IDE
// launching it from any working directory finds the same node data.
func mcpDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "jido-bus", "mcp"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no --data-dir given and no home directory to default to: %w", err)
	}
	return filepath.Join(home, ".local", "share", "jido-bus", "mcp"), nil
}

func runMCP(ctx context.Context, cfg mcpConfig, in io.Reader, out io.Writer) error {
	log, err := newLogger(cfg.logLevel, cfg.logFormat)
	if err != nil {
		return err
	}
	if cfg.remote() {
		return runMCPRemote(ctx, cfg, log, in, out)
	}
	if cfg.dataDir == "" {
		if cfg.dataDir, err = mcpDataDir(); err != nil {
			return err
		}
	}
	root, err := filepath.Abs(cfg.project)
	if err != nil {
		return fmt.Errorf("--project %s: %w", cfg.project, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fmt.Errorf("--project %s: not a folder: give the path of the project to serve", cfg.project)
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return fmt.Errorf("--data-dir %s: %w", cfg.dataDir, err)
	}
	n, err := node.Start(ctx, node.Config{
		DataDir: cfg.dataDir,
		NATS:    node.NATSConfig{Listen: "127.0.0.1:0"},
		Logger:  log,
		Version: version,
	})
	if err != nil {
		return fmt.Errorf("start the node on %s (is another jido-bus using it? give this one its own --data-dir): %w", cfg.dataDir, err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Shutdown(stopCtx); err != nil {
			log.Warn("shut down", "err", err)
		}
	}()
	id := n.ProjectOn(root)
	if id == "" {
		info, err := n.Projects().Open(ctx, projects.OpenRequest{Root: root, ID: cfg.id})
		if err != nil {
			return fmt.Errorf("--project %s: %w", cfg.project, err)
		}
		id = info.ID
	} else if cfg.id != "" && cfg.id != id {
		return fmt.Errorf("--project %s is already open as %s in %s: drop --id or pass --id %s", cfg.project, id, cfg.dataDir, id)
	}
	log.Info("serving MCP on stdio", "project", id, "root", root, "data_dir", cfg.dataDir)
	g := mcpgw.New(n.MCPHost(), mcpgw.Options{Version: version, Logger: log})
	defer g.Close()
	if err := g.ServeStdio(ctx, id, in, out); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

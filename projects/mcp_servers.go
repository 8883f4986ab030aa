package projects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	neturl "net/url"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/mcpclient"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// MCPServerConfig is one entry of mcp_servers: in a project's
// .jido/config.yaml: an MCP server run as a command speaking MCP on its
// stdin and stdout. It runs exactly as run_command would run it: the
// program must be listed in the policy's commands.programs, run_command
// must be allowed, and it is confined the same way (its view of the file
// system, Landlock, limits, network only with commands.network).
//
//	mcp_servers:
//	  notes:
//	    command: [/usr/local/bin/notes-mcp, --stdio]
//	    cwd: docs
//
// Or a streamable-HTTP server, at a URL the node's operator allows
// (Config.MCPRemotes), with the credential the operator gave for it:
//
//	mcp_servers:
//	  issues: {url: "https://mcp.example.com/mcp"}
type MCPServerConfig struct {
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	Cwd     string   `yaml:"cwd,omitempty" json:"cwd,omitempty"`
	URL     string   `yaml:"url,omitempty" json:"url,omitempty"`
}

// MCPRemote is a streamable-HTTP MCP server the node's operator lets
// projects use: its URL, and the variable of the node's environment
// holding the bearer token sent to it ("" sends none). The variable is
// read at each connection; a project never names it.
type MCPRemote struct {
	URL       string
	BearerEnv string
}

// MaxMCPServers bounds the servers one project may run.
const MaxMCPServers = 8

// mcpServerName is a server's name: its tools are <name>.<tool>.
var mcpServerName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// mcpServersConfig reads mcp_servers: from project p's config.yaml; the
// rest of the file is Settings' to check.
func mcpServersConfig(p *project) (map[string]MCPServerConfig, error) {
	name := path.Join(p.dataDir, ConfigFile)
	data, err := p.rootDir.ReadFile(name, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var f struct {
		Servers map[string]MCPServerConfig `yaml:"mcp_servers"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %s", name, yaml.FormatError(err, false, false))
	}
	return f.Servers, checkMCPServers(f.Servers, name)
}

func checkMCPServers(servers map[string]MCPServerConfig, file string) error {
	if len(servers) > MaxMCPServers {
		return fmt.Errorf("mcp_servers: in %s lists %d servers; a project runs at most %d", file, len(servers), MaxMCPServers)
	}
	for n, c := range servers {
		if !mcpServerName.MatchString(n) {
			return fmt.Errorf("mcp_servers.%s in %s: a server's name is 1-32 of a-z, 0-9, '_' and '-', starting with a letter (its tools are <name>.<tool>)", n, file)
		}
		for _, p := range reservedPrefixes {
			if strings.HasPrefix(n+".", p) {
				return fmt.Errorf("mcp_servers.%s in %s: %q is the name of the project assets' tools; pick another name", n, file, n)
			}
		}
		switch {
		case len(c.Command) == 0 && c.URL == "":
			return fmt.Errorf("mcp_servers.%s in %s: give command (the server's argv, e.g. [/usr/local/bin/notes-mcp, --stdio]) or url", n, file)
		case len(c.Command) > 0 && c.URL != "":
			return fmt.Errorf("mcp_servers.%s in %s: give command or url, not both", n, file)
		case c.URL != "" && c.Cwd != "":
			return fmt.Errorf("mcp_servers.%s in %s: cwd is for a command, not a url", n, file)
		}
	}
	return nil
}

// mcpServers are the MCP servers of the open projects, by project id.
type mcpServers struct {
	mu  sync.Mutex
	all map[string]*projectMCP
}

// projectMCP is one project's servers and the config they run.
type projectMCP struct {
	cfg     map[string]MCPServerConfig
	servers []*mcpclient.Server
}

// mcpStartWait bounds how long Open and Reload wait for the project's MCP
// servers' first start, so that their tools are listed when they return.
const mcpStartWait = 15 * time.Second

// startMCPServers starts the servers p's config lists. A config that
// cannot be read or is refused is logged and starts none: the project
// stays usable, and Settings says what is wrong at the next LLM call.
func (e *Engine) startMCPServers(p *project) {
	cfg, err := mcpServersConfig(p)
	if err != nil {
		e.log.Error("project's MCP servers not started", "project", p.id, "err", err)
		return
	}
	e.runMCPServers(p, cfg)
}

// reloadMCPServers starts p's servers again when mcp_servers: changed
// (after a project reload) and waits for their first start.
func (e *Engine) reloadMCPServers(ctx context.Context, p *project) error {
	cfg, err := mcpServersConfig(p)
	if err != nil {
		return bus.Errorf(bus.ReasonInvalidRequest, "project %s: %v", p.id, err)
	}
	e.mcp.mu.Lock()
	cur := e.mcp.all[p.id]
	e.mcp.mu.Unlock()
	if cur != nil && reflect.DeepEqual(cur.cfg, cfg) || cur == nil && len(cfg) == 0 {
		return nil
	}
	e.stopMCPServers(p.id)
	e.runMCPServers(p, cfg)
	if err := e.recatalog(p); err != nil {
		return err
	}
	e.awaitMCPServers(ctx, p.id)
	return nil
}

// awaitMCPServers waits, at most mcpStartWait, for the first start of
// each of project id's servers.
func (e *Engine) awaitMCPServers(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, mcpStartWait)
	defer cancel()
	e.mcp.mu.Lock()
	var ss []*mcpclient.Server
	if pm := e.mcp.all[id]; pm != nil {
		ss = pm.servers
	}
	e.mcp.mu.Unlock()
	for _, s := range ss {
		s.WaitStarted(ctx)
	}
}

func (e *Engine) runMCPServers(p *project, cfg map[string]MCPServerConfig) {
	names := make([]string, 0, len(cfg))
	for n := range cfg {
		names = append(names, n)
	}
	sort.Strings(names)
	var ss []*mcpclient.Server
	for _, n := range names {
		ss = append(ss, mcpclient.Start(mcpclient.Options{
			Name:       n,
			Dial:       e.dial(p, n, cfg[n]),
			OnChange:   func() { e.mcpChanged(p) },
			Logger:     e.log.With("project", p.id),
			MinBackoff: e.cfg.MCPMinBackoff,
		}))
	}
	e.mcp.mu.Lock()
	if e.mcp.all == nil {
		e.mcp.all = map[string]*projectMCP{}
	}
	e.mcp.all[p.id] = &projectMCP{cfg: cfg, servers: ss}
	e.mcp.mu.Unlock()
	// A server may have listed its tools before it was registered here,
	// and its OnChange then rebuilt the catalog without them: rebuild
	// once they are all findable.
	if len(ss) > 0 {
		e.mcpChanged(p)
	}
}

// stopMCPServers stops project id's servers and waits for their
// processes to end.
func (e *Engine) stopMCPServers(id string) {
	e.mcp.mu.Lock()
	pm := e.mcp.all[id]
	delete(e.mcp.all, id)
	e.mcp.mu.Unlock()
	if pm == nil {
		return
	}
	for _, s := range pm.servers {
		_ = s.Close() // nil: it waits, it does not fail
	}
}

// mcpChanged rebuilds p's catalog after a server's tools or status
// changed, unless p is closed.
func (e *Engine) mcpChanged(p *project) {
	p.wmu.Lock()
	done := p.done
	p.wmu.Unlock()
	if done {
		return
	}
	if err := e.recatalog(p); err != nil {
		e.log.Error("an MCP server's tools changed but the project's catalog could not be rebuilt; it keeps its tools", "project", p.id, "err", err)
	}
}

// MCPServers are the states of project id's MCP servers, by name.
func (e *Engine) MCPServers(id string) []mcpclient.State {
	ss := e.projectMCPServers(id)
	out := make([]mcpclient.State, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.State())
	}
	return out
}

func (e *Engine) projectMCPServers(id string) []*mcpclient.Server {
	e.mcp.mu.Lock()
	defer e.mcp.mu.Unlock()
	if pm := e.mcp.all[id]; pm != nil {
		return slices.Clone(pm.servers)
	}
	return nil
}

// mcpTools are project id's MCP servers' tools, as catalog entries named
// <server>.<tool>. A tool whose name or schema the catalog would refuse is
// left out (and logged), so that one bad tool does not cost the others.
func (e *Engine) mcpTools(id string) []tools.Tool {
	ss := e.projectMCPServers(id)
	var out []tools.Tool
	for _, s := range ss {
		for _, mt := range s.Tools() {
			t := mcpTool(s, mt)
			if _, err := tools.NewCatalog(t); err != nil {
				e.log.Warn("an MCP server's tool is left out of the catalog", "project", id, "server", s.Name(), "tool", mt.Name, "err", err)
				continue
			}
			out = append(out, t)
		}
	}
	return out
}

// mcpTool is the catalog entry of tool mt of server s. Its Safety comes
// from the tool's annotations: readOnlyHint makes it a reader; anything
// else (no annotations included) writes, so that plan mode never offers
// it and ask mode asks.
func mcpTool(s *mcpclient.Server, mt *mcp.Tool) tools.Tool {
	schema, err := json.Marshal(mt.InputSchema)
	if err != nil || mt.InputSchema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	safety := tools.Safety{Writes: true}
	if mt.Annotations != nil && mt.Annotations.ReadOnlyHint {
		safety = tools.Safety{Reads: true}
	}
	name := s.Name() + "." + mt.Name
	desc := mt.Description
	if desc == "" {
		desc = mt.Title
	}
	return tools.Tool{
		Name:           name,
		Description:    fmt.Sprintf("%s (tool %s of the project's MCP server %s)", strings.TrimSpace(desc), mt.Name, s.Name()),
		InputSchema:    schema,
		TextField:      "text",
		Safety:         safety,
		HonoursContext: true,
		Func: func(ctx context.Context, c *tools.Call) (any, error) {
			res, err := s.Call(ctx, mt.Name, c.Args)
			if errors.Is(err, mcpclient.ErrUnavailable) {
				return nil, &tools.Error{Type: tools.ReasonUnavailable, Message: fmt.Sprintf("%s: %v", name, err)}
			}
			if err != nil {
				return nil, fmt.Errorf("MCP server %s: %w", s.Name(), err)
			}
			return mcpOutput(name, res)
		},
	}
}

// mcpOutput is a tool result as the runner records it: the text of its
// text contents, and its structured content when it has one. A result
// the server marks as an error is the call's failure, with that text.
func mcpOutput(name string, res *mcp.CallToolResult) (any, error) {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if res.IsError {
		return nil, &tools.Error{Type: tools.ReasonToolFailed, Message: fmt.Sprintf("%s: %s", name, text)}
	}
	out := map[string]any{"text": text}
	if res.StructuredContent != nil {
		out["structured"] = res.StructuredContent
	}
	return out, nil
}

// dial is how server name of p is reached: its command, or its URL.
func (e *Engine) dial(p *project, name string, c MCPServerConfig) mcpclient.Dial {
	if c.URL != "" {
		return e.httpDial(name, c.URL)
	}
	return e.stdioDial(p, name, c)
}

// httpDial reaches server name at url over streamable HTTP, if the
// node's operator allows url (Config.MCPRemotes, compared exactly),
// sending the operator's bearer token for it. A URL not allowed is
// refused for good: the server is not dialed again.
func (e *Engine) httpDial(name, url string) mcpclient.Dial {
	i := slices.IndexFunc(e.cfg.MCPRemotes, func(r MCPRemote) bool { return r.URL == url })
	return func(ctx context.Context) (mcp.Transport, func() error, error) {
		if i < 0 {
			return nil, nil, fmt.Errorf("%w: MCP server %s: url %s is not one the node's operator lets projects use; ask them to allow it (serve --mcp-remote URL, or mcp_remotes in its --config), or remove it from mcp_servers", mcpclient.ErrRefused, name, url)
		}
		r := e.cfg.MCPRemotes[i]
		u, err := neturl.Parse(r.URL)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: MCP server %s: the operator's url %s: %v", mcpclient.ErrRefused, name, r.URL, err)
		}
		client := &http.Client{Transport: bearer{env: r.BearerEnv, scheme: u.Scheme, host: u.Host, next: http.DefaultTransport}}
		return &mcp.StreamableClientTransport{Endpoint: r.URL, HTTPClient: client, MaxRetries: -1}, func() error { return nil }, nil
	}
}

// bearer adds the operator's token, read from the node's environment at
// each request, as Authorization, to requests for the operator's scheme
// and host only: a server that redirects elsewhere, or from https to
// plain http on the same host, does not pass the token on.
type bearer struct {
	env, scheme, host string
	next              http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.env != "" && r.URL.Scheme == b.scheme && r.URL.Host == b.host {
		if tok := os.Getenv(b.env); tok != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	return b.next.RoundTrip(r)
}

// stdioDial starts server name of project p as a command, through the
// project's sandbox as it is at each start (a policy changed since
// applies at the next restart): checked by Sandbox.Command as a
// run_command call and run by policy.Exec, confined the same way, with
// its stdin and stdout the session's pipes.
func (e *Engine) stdioDial(p *project, name string, c MCPServerConfig) mcpclient.Dial {
	return func(ctx context.Context) (mcp.Transport, func() error, error) {
		spec, err := p.box().Command("run_command", policy.CommandRequest{Argv: c.Command, Dir: c.Cwd}, os.Environ())
		if err != nil {
			return nil, nil, fmt.Errorf("MCP server %s is not started: %s (it runs as run_command would run it)", name, bus.AsError(err).Message)
		}
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("MCP server %s: %w", name, err)
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, nil, fmt.Errorf("MCP server %s: %w", name, err)
		}
		ended := make(chan error, 1)
		go func() {
			res, err := policy.Exec(ctx, spec, policy.ExecOptions{Stdin: inR, Stdout: outW})
			// The session reads EOF once the program's ends are closed.
			inR.Close()
			outW.Close()
			ended <- exitError(name, res, err)
		}()
		end := func() error {
			err := <-ended
			outR.Close()
			inW.Close()
			return err
		}
		return &mcp.IOTransport{Reader: outR, Writer: inW}, end, nil
	}
}

// exitError says how a server's process ended, with the end of what it
// wrote on stderr.
func exitError(name string, res *policy.CommandResult, err error) error {
	var stderr string
	if res != nil {
		stderr = strings.TrimSpace(string(tailBytes(res.Stderr, 512)))
	}
	switch {
	case err != nil && stderr != "":
		return fmt.Errorf("MCP server %s: %s; its stderr ends: %s", name, bus.AsError(err).Message, stderr)
	case err != nil:
		return fmt.Errorf("MCP server %s: %s", name, bus.AsError(err).Message)
	case res != nil && stderr != "":
		return fmt.Errorf("MCP server %s exited (code %d); its stderr ends: %s", name, res.ExitCode, stderr)
	case res != nil:
		return fmt.Errorf("MCP server %s exited (code %d)", name, res.ExitCode)
	}
	return nil
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

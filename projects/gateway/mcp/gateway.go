package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// DefaultSessionTimeout closes an HTTP session that sent nothing for this
// long (a client that vanished without DELETE).
const DefaultSessionTimeout = 30 * time.Minute

// Options configures a Gateway; the zero value is usable.
type Options struct {
	// Version is the server version clients see (serverInfo.version).
	Version string
	// Logger receives the gateway's and the SDK's log; nil discards it.
	Logger *slog.Logger
	// SessionTimeout closes idle HTTP sessions; 0 means
	// DefaultSessionTimeout, a negative value never.
	SessionTimeout time.Duration
}

// Gateway serves a node's projects over MCP. It is safe for concurrent
// use; one Gateway serves any number of HTTP sessions and stdio streams.
type Gateway struct {
	h   Host
	o   Options
	log *slog.Logger
	// key signs the approval state handed to a client between the two
	// rounds of an elicited approval (approval.go).
	key []byte

	mu      sync.Mutex
	views   map[string]*httpView // by project; "" is every project
	servers map[*server]struct{} // every live server, for OnAssetsChanged
	cancel  func()
}

// httpView is the MCP server and HTTP handler of one path: sessions of
// /mcp/a are never served on /mcp/b.
type httpView struct {
	srv     *server
	handler http.Handler
}

// callerHeader carries the front door's Caller from the HTTP request into
// the SDK's handlers (which see the request's headers, not its context).
// Handler always overwrites it, so a client cannot forge it.
const callerHeader = "X-Jido-Gateway-Caller"

// New returns a gateway over h. Close releases its hook on h.
func New(h Host, o Options) *Gateway {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.SessionTimeout < 0 {
		o.SessionTimeout = 0
	}
	g := &Gateway{h: h, o: o, log: o.Logger, key: make([]byte, 32), views: map[string]*httpView{}, servers: map[*server]struct{}{}}
	_, _ = rand.Read(g.key) // crypto/rand.Read never fails
	g.cancel = h.OnAssetsChanged(g.changed)
	return g
}

// Close stops listening to the host's changes. Sessions still open go on
// being served with what they last listed. It returns nil: an io.Closer.
func (g *Gateway) Close() error {
	g.cancel()
	return nil
}

// changed brings every server that shows project up to date; the SDK then
// sends the list_changed notifications its sessions are owed.
func (g *Gateway) changed(project string) {
	g.mu.Lock()
	var ss []*server
	for s := range g.servers {
		if s.project == "" || s.project == project {
			ss = append(ss, s)
		}
	}
	g.mu.Unlock()
	for _, s := range ss {
		s.sync()
	}
}

func (g *Gateway) add(s *server) {
	g.mu.Lock()
	g.servers[s] = struct{}{}
	g.mu.Unlock()
}

func (g *Gateway) remove(s *server) {
	g.mu.Lock()
	delete(g.servers, s)
	g.mu.Unlock()
}

// Handler serves streamable HTTP on /mcp (every project) and
// /mcp/{project} (one project), the paths as they arrive (mount it at
// /mcp and /mcp/ without stripping the prefix). A project that is not
// open is 404 with {"error":{"type":"not_found","message":…}}. The
// caller recorded is gateway.CallerOf(r.Context()), which the front door
// sets.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) { g.serveHTTP(w, r, "") })
	mux.HandleFunc("/mcp/{project}", func(w http.ResponseWriter, r *http.Request) {
		g.serveHTTP(w, r, r.PathValue("project"))
	})
	mux.HandleFunc("/mcp/", func(w http.ResponseWriter, r *http.Request) {
		refuse(w, http.StatusNotFound, bus.ReasonNotFound, fmt.Sprintf("no MCP endpoint at %s: use /mcp (every project) or /mcp/<project-id>", r.URL.Path))
	})
	return mux
}

func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request, project string) {
	if project != "" {
		if _, err := g.h.ToolDetails(project); err != nil {
			refuse(w, http.StatusNotFound, bus.ErrorType(err), fmt.Sprintf("project %s is not open on this node: open it (jido-bus project open PATH --id %s) or list them (jido-bus project list)", project, project))
			return
		}
	}
	c, _ := json.Marshal(gateway.CallerOf(r.Context()))
	r.Header.Set(callerHeader, string(c))
	g.view(project).handler.ServeHTTP(w, r)
}

// view returns the server and handler of project's path, made at its
// first request.
func (g *Gateway) view(project string) *httpView {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.views[project]; ok {
		return v
	}
	s := g.newServer(project, gateway.Caller{Name: "unknown"})
	g.servers[s] = struct{}{}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, &sdk.StreamableHTTPOptions{
		Logger:         g.log,
		SessionTimeout: g.o.SessionTimeout,
	})
	v := &httpView{srv: s, handler: h}
	g.views[project] = v
	return v
}

// refuse writes an HTTP refusal in the front door's shape.
func refuse(w http.ResponseWriter, status int, typ, msg string) {
	if typ == "" {
		typ = bus.ReasonNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"type": typ, "message": msg}})
}

// ServeStdio serves MCP for project on in and out (newline-delimited
// JSON-RPC, the stdio transport) until in ends or ctx is done. The caller
// recorded is {Name: "stdio"}. A project that is not open is an error
// before anything is read.
func (g *Gateway) ServeStdio(ctx context.Context, project string, in io.Reader, out io.Writer) error {
	if project == "" {
		return bus.Errorf(bus.ReasonInvalidRequest, "stdio serves one project: name it")
	}
	if _, err := g.h.ToolDetails(project); err != nil {
		return fmt.Errorf("mcp stdio: project %s: %w", project, err)
	}
	s := g.newServer(project, gateway.Caller{Name: "stdio"})
	g.add(s)
	defer g.remove(s)
	err := s.mcp.Run(ctx, stdioTransport{conn: newStdioConn(in, out), done: ctx.Done()})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("mcp stdio: project %s: %w", project, err)
}

// Package mcpclient keeps a connection to one external MCP server: it
// dials it (a transport the caller makes: a sandboxed stdio command, a
// streamable-HTTP URL), lists its tools, follows notifications/tools/
// list_changed, and when the connection ends dials again with a capped
// backoff. Calls made while it is down fail at once with ErrUnavailable.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Statuses of State.
const (
	StatusStarting   = "starting"   // first dial under way
	StatusReady      = "ready"      // connected; its tools can be called
	StatusRestarting = "restarting" // the connection ended; waiting to dial again
	StatusStopped    = "stopped"    // Close was called
	StatusRefused    = "refused"    // Dial refused it for good (ErrRefused); not dialed again
)

// Default backoff between dials: doubled after each failed session, up
// to the maximum, and back to the minimum once a session was ready.
const (
	DefaultMinBackoff = 200 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// ErrRefused, in a Dial's error, says dialing again cannot help (the
// server is not allowed): the Server stays refused.
var ErrRefused = errors.New("refused")

// ErrUnavailable is the error of a call made while the server is not
// connected.
var ErrUnavailable = errors.New("mcp server unavailable")

// Dial connects to the server once. It returns the transport to speak
// MCP over and a function that ends what Dial started (a process) and
// says why it ended, or nil when nothing went wrong. ctx bounds the
// whole session, not only the dial.
type Dial func(ctx context.Context) (mcp.Transport, func() error, error)

// Options configure a Server. Name and Dial are required.
type Options struct {
	Name string
	Dial Dial
	// OnChange is called, on the Server's goroutine, after the tools or
	// the status changed; it must not block for long.
	OnChange   func()
	Logger     *slog.Logger
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// State is what a Server is doing, for project get and project tools.
type State struct {
	Name     string `json:"name"`
	Status   string `json:"status"`
	Tools    int    `json:"tools"`
	Restarts int    `json:"restarts"`
	// Error is why the last session ended or could not start.
	Error string `json:"error,omitempty"`
}

// Server is one external MCP server kept connected. It is safe for
// concurrent use; Close stops it.
type Server struct {
	o      Options
	cancel context.CancelFunc
	done   chan struct{}
	// first is closed once the first session is ready or has failed.
	first     chan struct{}
	firstOnce sync.Once

	mu    sync.Mutex
	cs    *mcp.ClientSession
	tools []*mcp.Tool
	state State
}

// Start starts keeping the server connected, on a goroutine Close stops.
func Start(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{o: o, cancel: cancel, done: make(chan struct{}), first: make(chan struct{}), state: State{Name: o.Name, Status: StatusStarting}}
	go s.run(ctx)
	return s
}

// Close ends the session and the process behind it, and waits for them.
func (s *Server) Close() {
	s.cancel()
	<-s.done
	s.mu.Lock()
	s.state.Status, s.cs = StatusStopped, nil
	s.mu.Unlock()
}

// WaitStarted waits until the first dial has come to a ready session or
// to a failure (State says which), or ctx is done.
func (s *Server) WaitStarted(ctx context.Context) {
	select {
	case <-s.first:
	case <-s.done:
	case <-ctx.Done():
	}
}

func (s *Server) started() { s.firstOnce.Do(func() { close(s.first) }) }

// Name is the server's name.
func (s *Server) Name() string { return s.o.Name }

// State is the server's state now.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Tools are the tools the server last listed; they are kept while it is
// down, so that the catalog does not change at each restart.
func (s *Server) Tools() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// Call calls tool with args on the server. While the server is down it
// fails at once with an error wrapping ErrUnavailable; a connection that
// ends during the call does too.
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	cs, st := s.cs, s.state
	s.mu.Unlock()
	if cs == nil {
		why := ""
		if st.Error != "" {
			why = ": " + st.Error
		}
		return nil, fmt.Errorf("%w: MCP server %s is %s%s; it is restarted on its own, try again shortly (project get shows its state)", ErrUnavailable, s.o.Name, st.Status, why)
	}
	var a any
	if len(args) > 0 {
		a = args
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: a})
	if err != nil && ctx.Err() == nil {
		s.mu.Lock()
		gone := s.cs != cs
		s.mu.Unlock()
		if gone || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: MCP server %s ended during the call to %s (%v); it is restarted on its own", ErrUnavailable, s.o.Name, tool, err)
		}
	}
	return res, err
}

func (s *Server) run(ctx context.Context) {
	defer close(s.done)
	backoff := s.o.MinBackoff
	for {
		ready, err := s.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if ready {
			backoff = s.o.MinBackoff
		}
		if errors.Is(err, ErrRefused) {
			s.o.Logger.Error("MCP server refused; not started", "server", s.o.Name, "err", err)
			s.mu.Lock()
			s.cs = nil
			s.state.Status, s.state.Error = StatusRefused, err.Error()
			s.mu.Unlock()
			s.changed()
			s.started()
			<-ctx.Done()
			return
		}
		msg := "the connection ended"
		if err != nil {
			msg = err.Error()
		}
		s.o.Logger.Warn("MCP server down; dialing again", "server", s.o.Name, "in", backoff, "err", msg)
		s.mu.Lock()
		s.cs = nil
		s.state.Status, s.state.Error = StatusRestarting, msg
		s.mu.Unlock()
		s.changed()
		s.started()
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, s.o.MaxBackoff)
		s.mu.Lock()
		s.state.Restarts++
		s.mu.Unlock()
	}
}

// session dials, lists the tools and serves the connection until it ends
// or ctx is done. ready says the session got as far as its tools.
func (s *Server) session(ctx context.Context) (ready bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr, end, err := s.o.Dial(sctx)
	if err != nil {
		return false, err
	}
	defer func() {
		cancel()
		if eerr := end(); eerr != nil && ctx.Err() == nil {
			err = eerr
		}
	}()
	listChanged := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "jido-bus", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(sctx, tr, nil)
	if err != nil {
		return false, fmt.Errorf("MCP server %s: initialize: %w", s.o.Name, err)
	}
	defer cs.Close()
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	if err := s.list(sctx, cs); err != nil {
		cs.Close()
		<-ended
		return false, err
	}
	for {
		select {
		case <-listChanged:
			if err := s.list(sctx, cs); err != nil {
				cs.Close()
				<-ended
				return true, err
			}
		case err := <-ended:
			return true, err
		case <-ctx.Done():
			cs.Close()
			<-ended
			return true, nil
		}
	}
}

// maxTools bounds the tools one server may offer.
const maxTools = 256

// list takes the server's tool list and makes the session the one calls
// go to.
func (s *Server) list(ctx context.Context, cs *mcp.ClientSession) error {
	var all []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("MCP server %s: tools/list: %w", s.o.Name, err)
		}
		if len(all) == maxTools {
			return fmt.Errorf("MCP server %s offers more than %d tools; a project takes at most %d from one server", s.o.Name, maxTools, maxTools)
		}
		all = append(all, t)
	}
	s.mu.Lock()
	s.cs, s.tools = cs, all
	s.state.Status, s.state.Tools, s.state.Error = StatusReady, len(all), ""
	s.mu.Unlock()
	s.changed()
	s.started()
	return nil
}

func (s *Server) changed() {
	if s.o.OnChange != nil {
		s.o.OnChange()
	}
}

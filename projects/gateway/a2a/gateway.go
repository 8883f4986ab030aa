// Package a2a is the A2A gateway: each open project is an A2A agent at
// /a2a/{project}/, served with the official SDK
// (github.com/a2aproject/a2a-go/v2) over JSON-RPC, A2A 1.0 and 0.3 (the
// SDK's compatibility layer) on the same URL, with its agent card at
// /a2a/{project}/.well-known/agent-card.json (card.go), where a client
// given the agent's URL looks for it.
//
// An A2A context is a conversation of the project, and its tasks are the
// conversation's turns (task.go): the first task has the conversation's
// id, the n-th "<conversation>:<n>". SendMessage and SendStreamingMessage
// append the user's text as conversation.user.message (starting the
// conversation for a new context); GetTask reads the task from the
// conversation's events; CancelTask appends conversation.cancel. The
// gateway keeps no task of its own: everything it answers is folded from
// the log, so a task outlives the node that started it. A context's
// tasks are seen only by the caller that started it and by admins
// (owner.go).
package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// Host is what the gateway needs of the node. Its methods may be called
// concurrently. Errors that a caller should see are *bus.Error (their
// type word is recorded and mapped to an A2A error).
type Host interface {
	gateway.Recorder
	// Project describes open project id; an id that names no usable
	// project fails not_found (or unavailable).
	Project(ctx context.Context, id string) (Project, error)
	// StartConversation starts conversation conv of project with the
	// assistant's loop on (convapi's Start), its
	// conversation.started naming owner as data.by (owner.go); an id in
	// use fails already_exists.
	// mode is its permission mode (gateway.StartMode: "" is auto).
	StartConversation(ctx context.Context, project, conv, owner, mode string) error
	// SendMessage appends conversation.user.message with text to the
	// conversation key (<project>/<conversation>) and returns the event's
	// id once it is committed.
	SendMessage(ctx context.Context, key, text string) (string, error)
	// CancelConversation appends conversation.cancel to key, once
	// committed; a conversation that does not run fails not_found.
	CancelConversation(ctx context.Context, key, reason string) error
	// ConversationEvents returns key's logged conversation events in
	// order; none (and no error) when the conversation never started.
	ConversationEvents(ctx context.Context, key string) ([]*views.Event, error)
	// FollowConversation follows key from when it returns: its iterator
	// yields key's logged events with Seq > after, in order and without a
	// gap, and the transient assistant deltas (Seq 0) published since the
	// call, as they come, until ctx ends (it then stops without an error)
	// or it fails. What it holds is released when ctx ends, whether or not
	// the iterator ran.
	FollowConversation(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error)
}

// Project is what the agent card says of a project.
type Project struct {
	ID          string
	Description string
	Skills      []Skill
}

// Skill is a command, workflow or skill of the project, as the card lists
// it.
type Skill struct {
	ID, Name, Description string
	Tags                  []string
}

// Options configure a Gateway. The zero value serves; BaseURL should be
// set for cards that clients elsewhere can follow.
type Options struct {
	// BaseURL is the public base of the HTTP front door, http://host:port
	// (no trailing slash); a card's URL is BaseURL + /a2a/{project}. Empty
	// takes the scheme and Host of the request for the card.
	BaseURL string
	// BearerAuth says the front door asks for a bearer token: the card
	// then declares the bearer scheme as required.
	BearerAuth bool
	// MaxBodyBytes bounds a JSON-RPC request's body; 0 means 1 MiB (the
	// front door's default limit, which applies first when it is lower).
	MaxBodyBytes int64
	// Log receives the SDK's and the gateway's logs; nil discards them.
	Log *slog.Logger
}

// Gateway serves A2A for every open project of a Host.
type Gateway struct {
	host    Host
	opts    Options
	handler *requestHandler
	v1, v0  http.Handler
	mux     *http.ServeMux
}

// New returns the gateway of h.
func New(h Host, o Options) *Gateway {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.BaseURL = strings.TrimSuffix(o.BaseURL, "/")
	g := &Gateway{host: h, opts: o}
	g.handler = &requestHandler{host: h, log: o.Log, card: g.extendedCard}
	// The SDK's own interceptors (logging, the capability checks) wrap
	// our handler as they wrap its default one.
	rh := &a2asrv.InterceptedHandler{Handler: g.handler, Logger: o.Log}
	g.v1 = a2asrv.NewJSONRPCHandler(rh)
	g.v0 = a2av0.NewJSONRPCHandler(rh)
	g.mux = http.NewServeMux()
	g.mux.HandleFunc(CardPath, g.serveCard)
	g.mux.HandleFunc(misplacedCardPath, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, bus.ReasonNotFound, "no agent card here: an agent's URL is /a2a/<project-id>/, with the trailing slash, and its card /a2a/<project-id>/.well-known/agent-card.json; a client given the URL without the slash looks for the card here")
	})
	g.mux.HandleFunc("/a2a/{project}", g.serveRPC)
	g.mux.HandleFunc("/a2a/{project}/{$}", g.serveRPC)
	g.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, bus.ReasonNotFound, "no A2A endpoint at "+r.URL.Path+": an agent is /a2a/<project-id>/ (JSON-RPC, POST), its card /a2a/<project-id>/.well-known/agent-card.json")
	})
	return g
}

// CardPath is where each project's agent card is served (a ServeMux
// pattern).
const CardPath = "/a2a/{project}/.well-known/agent-card.json"

// misplacedCardPath is where a client given an agent's URL without its
// trailing slash (/a2a/p1) looks for the card, as a relative reference
// resolves: it is told where the card is.
const misplacedCardPath = "/a2a/.well-known/agent-card.json"

// Public returns the requests (ServeMux patterns) the gateway answers to
// anyone, for the front door to let in without a token: a card says how
// to authenticate, so a client must read it first. Nothing else is
// public.
func Public() []string { return []string{"GET " + CardPath, "GET " + misplacedCardPath} }

// Handler serves /a2a/{project}/ (JSON-RPC; A2A 1.0 methods such as
// SendMessage and 0.3 methods such as message/send; /a2a/{project}
// without the slash too) and /a2a/{project}/.well-known/agent-card.json.
// Mount it at /a2a/ without stripping the prefix.
func (g *Gateway) Handler() http.Handler { return g.mux }

type projectKey struct{}

// projectOf returns the project the request's URL names.
func projectOf(ctx context.Context) string {
	p, _ := ctx.Value(projectKey{}).(string)
	return p
}

// serveRPC checks the project, then hands the request to the SDK's
// JSON-RPC binding of the protocol version its method belongs to: 0.3
// methods are slash-separated (message/send), 1.0's are not (SendMessage).
func (g *Gateway) serveRPC(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("project")
	if _, err := g.host.Project(r.Context(), id); err != nil {
		writeError(w, http.StatusNotFound, bus.ReasonNotFound, "no open project "+quote(id)+": "+bus.AsError(err).Message)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, bus.ReasonInvalidRequest, "the A2A endpoint takes JSON-RPC requests by POST; the agent card is GET /a2a/"+id+"/.well-known/agent-card.json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, http.StatusRequestEntityTooLarge, bus.ReasonTooLarge, "request body over the gateway's limit: send a shorter message")
			return
		}
		writeError(w, http.StatusBadRequest, bus.ReasonMalformed, "request body unreadable: "+err.Error())
		return
	}
	var head struct {
		Method string `json:"method"`
	}
	// A body that is not JSON goes on to the SDK, which answers it with a
	// JSON-RPC parse error; only the method's form matters here.
	_ = json.Unmarshal(body, &head)
	handled := new(atomic.Bool)
	ctx := context.WithValue(context.WithValue(r.Context(), projectKey{}, id), handledKey{}, handled)
	ctx = context.WithValue(ctx, baseKey{}, g.base(r))
	v0 := strings.Contains(head.Method, "/")
	if v0 {
		ctx = withLegacy(ctx)
	}
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	start := time.Now()
	if v0 {
		g.v0.ServeHTTP(w, r)
	} else {
		g.v1.ServeHTTP(w, r)
	}
	if !handled.Load() {
		// The SDK's binding refused the request before any method ran
		// (not JSON, not JSON-RPC 2.0, no such method): it reached the
		// project all the same, so it is recorded.
		g.handler.refused(ctx, head.Method, body, start)
	}
}

type handledKey struct{}

// markHandled notes that a method of the handler ran for the request.
func markHandled(ctx context.Context) {
	if h, ok := ctx.Value(handledKey{}).(*atomic.Bool); ok {
		h.Store(true)
	}
}

// writeError answers a request the gateway refuses before A2A begins (no
// such project, a wrong method or path) the way the front door refuses
// one: {"error":{"type","message"}}.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": bus.Error{Type: typ, Message: msg}})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

package convapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// Projects is what conversations need of the node's projects (the
// project engine is one). A conversation of a project is a child of its
// agent, and the ids under a project's id are the project's, open or
// not; a project records each of its conversations' starts and stops in
// its own stream, its audit trail, which only the engine writes.
type Projects interface {
	// Has reports whether id is a project of the node: open, being
	// opened, or listed with the error that kept it from reopening.
	Has(id string) bool
	// Usable fails unless project id is open and usable: not_found, or
	// unavailable for a project listed with an error, saying what to do.
	Usable(id string) error
	// Conversations are the conversations project id's stream records as
	// started and not stopped (their ids in the project).
	Conversations(id string) []string
	// ConversationStarted records in project id's stream that its
	// conversation conv started, by whom (by: an A2A caller, or "").
	ConversationStarted(ctx context.Context, id, conv, by string) error
	// ConversationStopped records that conv stopped, and why.
	ConversationStopped(ctx context.Context, id, conv, reason string) error
}

// Config configures a Service. Runtime, Log, Runner and Projects are
// required.
type Config struct {
	// InFlight reports whether this process makes LLM call req of
	// conversation key now (the assistant's); Resume leaves such a call
	// alone. Nil: none is.
	InFlight func(key, req string) bool
	// Runtime runs the conversation agents (type conversation.AgentType).
	Runtime *runtime.Runtime
	// Log is the node's event log, which holds each conversation's stream.
	Log *eventlog.Log
	// Runner folds the read models (views.Projections) that conv.ls and
	// conv.show read.
	Runner   *projections.Runner
	Projects Projects
	// Bus is the node's: Follow subscribes to the assistant's deltas on
	// its connection. Nil refuses Follow (unavailable).
	Bus *natsbus.Bus
	// Files are the project files and checkpoints conv.rewind restores
	// from (rewind.go); nil refuses conv.rewind (unavailable).
	Files Files
	// Now gives the time of the events a fork makes; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// commitTimeout bounds the wait for a conversation's start to commit, as
// it bounds the project engine's own commits.
const commitTimeout = 30 * time.Second

// Service runs the conversations of a node: the whole conv.* API
// (start, stop, ls, show, fork, send, cancel, approve), the resume of
// their interrupted work at start, following one (Follow), and the
// admission of conversation events sent from outside (guard.go). Serve
// answers it over NATS. It is safe for concurrent use.
type Service struct {
	rt       *runtime.Runtime
	log      *eventlog.Log
	reader   Reader
	projects Projects
	bus      *natsbus.Bus
	files    Files
	inFlight func(key, req string) bool
	now      func() time.Time
	logger   *slog.Logger
}

// New returns the service of cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Runtime == nil || cfg.Log == nil || cfg.Runner == nil || cfg.Projects == nil {
		return nil, errors.New("convapi: Config.Runtime, Log, Runner and Projects are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{
		rt: cfg.Runtime, log: cfg.Log, reader: Reader{Runner: cfg.Runner, Log: cfg.Log},
		projects: cfg.Projects, bus: cfg.Bus, files: cfg.Files, inFlight: cfg.InFlight, now: cfg.Now, logger: cfg.Logger,
	}, nil
}

// List lists conversations from the status read model (Reader.List).
func (s *Service) List(ctx context.Context, req ListRequest) (ListReply, error) {
	return s.reader.List(ctx, req)
}

// Show returns one read model of a conversation (Reader.Show).
func (s *Service) Show(ctx context.Context, req ShowRequest) (ShowReply, error) {
	return s.reader.Show(ctx, req)
}

package projectionapi

import (
	"encoding/json"
	"time"

	"github.com/jido-bus/jido-bus/projections"
)

// Control-plane areas and their verbs.
const (
	AreaProjection = "projection"
	AreaConv       = "conv"

	VerbList    = "ls"
	VerbGet     = "get"
	VerbRebuild = "rebuild"
	VerbShow    = "show"
	VerbFork    = "fork"
)

// ListRequest asks for the status of every projection.
type ListRequest struct{}

// ListReply lists the projections in definition order.
type ListReply struct {
	Projections []projections.Status `json:"projections"`
}

// GetRequest asks for the state of Key in projection Name: as of the last
// checkpoint, or folded afresh up to At when At bounds anything.
type GetRequest struct {
	Name string            `json:"name"`
	Key  string            `json:"key"`
	At   projections.Until `json:"at,omitzero"`
}

// RebuildRequest asks for projection Name to be rebuilt from the start of
// the log.
type RebuildRequest struct {
	Name string `json:"name"`
}

// RebuildReply is the projection's status right after the request.
type RebuildReply struct {
	Status projections.Status `json:"status"`
}

// ConvListRequest lists conversations, in key order: those of Project (all
// when empty), after the key After, at most Limit (zero: DefaultPageSize;
// negative: refused) and at most MaxReplyBytes of them.
type ConvListRequest struct {
	Project string `json:"project,omitempty"`
	After   string `json:"after,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

// DefaultPageSize is the conv.ls page size when a request gives none;
// MaxPageSize the largest, which a larger limit asks for.
const (
	DefaultPageSize = 500
	MaxPageSize     = 10000
)

// MaxReplyBytes bounds one conv.ls reply (NATS's default maximum payload
// is 1 MiB): a page stops before it would pass this, with Next set.
const MaxReplyBytes = 512 << 10

// ConvListReply is one page of conversations. Next is the After of the
// following page; empty at the end.
type ConvListReply struct {
	Conversations []ConvSummary `json:"conversations"`
	Next          string        `json:"next,omitempty"`
}

// ConvSummary is one line of conv.ls, from the status read model.
type ConvSummary struct {
	Conv         string    `json:"conv"`
	State        string    `json:"state"`
	PendingTools int       `json:"pending_tools"`
	LastSeq      uint64    `json:"last_seq"`
	UpdatedAt    time.Time `json:"updated_at"`
	Parent       string    `json:"parent,omitempty"`
}

// ConvShowRequest asks for one read model (View, default timeline) of
// conversation Conv ("<project-id>/<conversation-id>"), as of the last
// checkpoint, or folded up to the conversation's stream sequence Seq.
type ConvShowRequest struct {
	Conv string `json:"conv"`
	View string `json:"view,omitempty"`
	Seq  uint64 `json:"seq,omitempty"`
}

// ConvShowReply is the read model's state as JSON. Position is the global
// sequence it includes.
type ConvShowReply struct {
	Conv     string          `json:"conv"`
	View     string          `json:"view"`
	Position uint64          `json:"position"`
	State    json.RawMessage `json:"state"`
}

// ConvForkRequest forks conversation Conv at its stream sequence Seq into
// a new conversation As (default "<conv>-fork-<seq>" in the same project).
type ConvForkRequest struct {
	Conv string `json:"conv"`
	Seq  uint64 `json:"seq"`
	As   string `json:"as,omitempty"`
}

// ConvForkReply names the new conversation and says how many events it
// starts with.
type ConvForkReply struct {
	Conv    string `json:"conv"`
	Stream  string `json:"stream"`
	Events  int    `json:"events"`
	Version uint64 `json:"version"`
}

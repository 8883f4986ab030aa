package logapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jido-bus/jido-bus/eventlog"
)

// Verbs of the "log" control-plane area.
const (
	VerbStreams  = "streams"
	VerbShow     = "show"
	VerbTail     = "tail"
	VerbExport   = "export"
	VerbImport   = "import"
	VerbVerify   = "verify"
	VerbTruncate = "truncate"
)

// MaxReplyBytes bounds the entries of one read reply (NATS's default
// maximum payload is 1 MiB); a page stops before it would pass this.
const MaxReplyBytes = 512 << 10

// DefaultPageSize is the page Limit when a request gives none.
const DefaultPageSize = 1000

// StreamsRequest lists streams whose name starts with Prefix, sorted by
// name, from the first after After (all when empty).
type StreamsRequest struct {
	Prefix string `json:"prefix,omitempty"`
	After  string `json:"after,omitempty"`
}

// StreamsReply is one page of streams, sorted by name. A page ends before
// its reply would pass MaxReplyBytes; Next is then the After of the
// following page (empty: this page is the last).
type StreamsReply struct {
	Streams []eventlog.StreamInfo `json:"streams"`
	Next    string                `json:"next,omitempty"`
}

// ReadRequest asks for one page of a stream, or of the global log when
// Stream is empty. From, Limit, Backward and Types are as in
// eventlog.ReadOptions; Limit zero means DefaultPageSize, a negative one
// is refused (invalid_request).
type ReadRequest struct {
	Stream   string `json:"stream,omitempty"`
	From     uint64 `json:"from,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Backward bool   `json:"backward,omitempty"`
	Types    string `json:"types,omitempty"`
}

// ReadReply is one page.
type ReadReply struct {
	Entries []Entry `json:"entries"`
	// Damaged lists damaged entries met in the page (skipped).
	Damaged []*eventlog.CorruptError `json:"damaged,omitempty"`
	// Next is the position to ask for to continue in the same direction
	// (0 when reading backward reached the start).
	Next uint64 `json:"next"`
	// More is true when the page stopped at its limit or size bound rather
	// than at the end of what is durable now.
	More bool `json:"more"`
}

// Entry is a log entry as JSON: its position and the CloudEvent in
// structured JSON form.
type Entry struct {
	Stream    string          `json:"stream"`
	Seq       uint64          `json:"seq"`
	GlobalSeq uint64          `json:"global_seq"`
	Time      time.Time       `json:"time"`
	Event     json.RawMessage `json:"event"`
}

// ImportRequest appends CloudEvents (structured JSON) to Stream with any
// expected version; events already in the stream (same source and id) are
// skipped.
type ImportRequest struct {
	Stream string            `json:"stream"`
	Events []json.RawMessage `json:"events"`
}

// ImportReply counts what an import did.
type ImportReply struct {
	Appended   int    `json:"appended"`
	Duplicates int    `json:"duplicates"`
	Version    uint64 `json:"version"` // the stream's version afterwards
}

// VerifyRequest asks for a full integrity check.
type VerifyRequest struct{}

// TruncateRequest removes the entries of Stream below Before. With DryRun
// nothing changes; the reply says what would go.
type TruncateRequest struct {
	Stream string `json:"stream"`
	Before uint64 `json:"before"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// TruncateReply says what was removed (or, with DryRun, would be): Removed
// entries, sequences From to To inclusive (both 0 when none), Bytes of
// them (one copy, as StreamInfo counts).
type TruncateReply struct {
	Removed int    `json:"removed"`
	From    uint64 `json:"from,omitempty"`
	To      uint64 `json:"to,omitempty"`
	Bytes   uint64 `json:"bytes"`
	DryRun  bool   `json:"dry_run,omitempty"`
}

// TruncateGuard decides whether a truncation may go ahead, and may first
// make it safe (an agent runtime snapshots the agent that recovers from
// the stream). With req.DryRun it must change nothing. Its error refuses
// the truncation and reaches the user.
type TruncateGuard func(ctx context.Context, req TruncateRequest) error

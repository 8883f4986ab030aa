package eventlog

import (
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
)

// Sentinel errors, for errors.Is. The typed errors below wrap them.
var (
	// ErrWrongVersion: the stream's version is not the expected one.
	ErrWrongVersion = errors.New("wrong expected version")
	// ErrOutcomeUnknown: the append may or may not have been stored (a
	// replicated log lost the acknowledgement); read the stream, or retry
	// the same append, whose events' ids make a stored one a duplicate.
	ErrOutcomeUnknown = errors.New("outcome of the append unknown")
	// ErrCorrupt: a stored value failed its checksum or does not decode.
	ErrCorrupt = errors.New("corrupt entry")
	// ErrGone: the position was removed by truncation or deletion.
	ErrGone = errors.New("position is gone")
	// ErrNotFound: the stream or snapshot does not exist.
	ErrNotFound = errors.New("not found")
	// ErrClosed: the Log was closed.
	ErrClosed = errors.New("event log is closed")
	// ErrFailed: an earlier write could not be made durable; the Log
	// refuses further writes so that no sequence gap becomes visible.
	// Close and reopen it.
	ErrFailed = errors.New("event log failed")
	// ErrLocked: another process (usually a running server) holds the data
	// directory.
	ErrLocked = errors.New("data directory is locked by another process")
	// ErrDuplicate: an append that must write every event (StreamAppend.
	// AllNew) met one the stream already holds.
	ErrDuplicate = errors.New("event already in the stream")
)

// Error type words, for replies over NATS (bus.Error.Type). They extend the
// bus.Reason words with what only the log knows.
const (
	ReasonInvalidStream = bus.ReasonInvalidStream // a stream name breaks the grammar (a refusal: natsbus dead-letters it)
	ReasonWrongVersion  = "wrong_version"         // expected version mismatch
	ReasonCorrupt       = "corrupt"               // a damaged entry
	ReasonGone          = "gone"                  // a truncated or deleted position
)

// AppendError reports an expected-version mismatch on one stream. It wraps
// ErrWrongVersion. Nothing of the append was written.
type AppendError struct {
	Stream   string
	Expected ExpectedVersion
	Actual   uint64 // the stream's version (head) when the append was tried
}

func (e *AppendError) Error() string {
	return fmt.Sprintf("append to %s: expected version %s, stream is at version %d: %v",
		e.Stream, e.Expected, e.Actual, ErrWrongVersion)
}

func (e *AppendError) Unwrap() error { return ErrWrongVersion }

// DuplicateError reports the first event of an AllNew append that the
// stream already holds (or that the same append holds twice). It wraps
// ErrDuplicate. Nothing of the append was written.
type DuplicateError struct {
	Stream   string
	Index    int      // the event's index in its part
	ID       string   // the event's id
	Existing Position // where the stream holds it
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("append to %s: event %d (id %q) is already at seq %d: %v", e.Stream, e.Index, e.ID, e.Existing.Seq, ErrDuplicate)
}

func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// CorruptError reports a damaged stored value: its position (as far as it
// can be known from the key) and why it is considered damaged. It wraps
// ErrCorrupt. The rest of the log stays readable.
type CorruptError struct {
	Stream    string `json:"stream,omitempty"`     // empty when only the global key is known
	Seq       uint64 `json:"seq,omitempty"`        // zero when only the global key is known
	GlobalSeq uint64 `json:"global_seq,omitempty"` // zero when only the stream key is known
	Reason    string `json:"reason"`
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.Position(), e.Reason, ErrCorrupt)
}

// Position names the damaged entry for a person: "agent/c1 seq 7",
// "global seq 19", both, or only the stream when its metadata is damaged.
func (e *CorruptError) Position() string {
	switch {
	case e.Stream != "" && e.Seq == 0 && e.GlobalSeq == 0:
		return e.Stream
	case e.Stream != "" && e.GlobalSeq != 0:
		return fmt.Sprintf("%s seq %d (global seq %d)", e.Stream, e.Seq, e.GlobalSeq)
	case e.Stream != "":
		return fmt.Sprintf("%s seq %d", e.Stream, e.Seq)
	default:
		return fmt.Sprintf("global seq %d", e.GlobalSeq)
	}
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// GoneError reports a read from a position before the first one retained.
// It wraps ErrGone.
type GoneError struct {
	Stream string
	Seq    uint64 // the position asked for
	First  uint64 // the first position still retained
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("read %s from seq %d: entries before seq %d were truncated: %v", e.Stream, e.Seq, e.First, ErrGone)
}

func (e *GoneError) Unwrap() error { return ErrGone }

package tools

import (
	"encoding/json"
	"time"
)

// Observer hears about every call: its start, then exactly one of
// ToolCompleted or ToolFailed, from the goroutine that called Run, in that
// order. Refusals (unknown tool, bad args, denied) are calls too. The
// engine commits them as project.tool.started|completed|failed entries.
// Methods are called synchronously and must not block for long; an
// Observer shared by concurrent calls must be safe for concurrent use.
//
// What must be durable before what decides how the start is heard. A
// call that may change something (a tool whose Safety writes or runs, or
// that calls other tools) has its start heard through ToolStarted before
// the tool runs. A call that changes nothing — a tool that only reads
// and calls no other, or any call refused before a tool ran — has its
// start heard with its outcome, as the outcome Event's Started, after it
// ran: the observer records both (and the outcome's With) in one commit.
//
// An error from a method says the observation is not durable, and the
// call is answered unavailable instead of what it would have been: an
// error from ToolStarted stops the call before the tool runs (and nothing
// more is observed of it), an error from ToolCompleted or ToolFailed
// turns the call's result into unavailable, saying that the tool ran and
// its effects may have happened. So no caller is told of an outcome that
// is not recorded, and no tool that may change something runs whose
// start is not.
type Observer interface {
	ToolStarted(Event) error
	ToolCompleted(Event) error
	ToolFailed(Event) error
}

// Event is one observation of a call.
type Event struct {
	CallID string `json:"call_id"`
	// Parent is the call that made this one (a workflow's), or "".
	Parent string `json:"parent,omitempty"`
	// Conversation is the ToolCall's: the conversation whose assistant
	// made the call, or "".
	Conversation string          `json:"conversation,omitempty"`
	Tool         string          `json:"tool"`
	Args         json.RawMessage `json:"args,omitempty"` // ToolStarted only
	// Duration is from the start of Run to its end (ToolCompleted,
	// ToolFailed), waiting for a slot included.
	Duration  time.Duration `json:"duration_ns,omitempty"`
	Size      int           `json:"size,omitempty"` // bytes of output (ToolCompleted)
	Artifacts []ArtifactRef `json:"artifacts,omitempty"`
	Error     *Error        `json:"error,omitempty"` // ToolFailed
	// Output is what a workflow's step returned (ToolCompleted of a call
	// with a Parent): the result's data, or its artifact's stand-in. It
	// is the workflow's progress, which the observer commits so that a
	// restart can go on from the next step (Runner.Resume).
	Output json.RawMessage `json:"output,omitempty"`
	// Started is the call's start, on the outcome of a call that changes
	// nothing (see Observer): it is recorded with the outcome, first.
	Started *Event `json:"-"`
	// With is what the call's ToolCall.WithOutcome returned, recorded with
	// the outcome, after it.
	With any `json:"-"`
}

type nopObserver struct{}

func (nopObserver) ToolStarted(Event) error   { return nil }
func (nopObserver) ToolCompleted(Event) error { return nil }
func (nopObserver) ToolFailed(Event) error    { return nil }

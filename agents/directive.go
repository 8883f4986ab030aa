package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// Directive is an effect described as data: what an agent wants done,
// handed to the runtime, which commits it to the log before executing it
// (the way etcd's raft hands a Ready to its caller). Each directive type
// has a kind, the "kind" member of its log form; the built-in kinds are
// below, and other packages add their own with a DirectiveCodec.
//
// A Directive value is immutable once Cmd has returned it.
type Directive interface {
	// DirectiveKind returns the kind word, lower_snake_case, constant for
	// the type.
	DirectiveKind() string
}

// Kinds of the built-in directives.
const (
	KindEmit           = "emit"
	KindError          = "error"
	KindSpawnAgent     = "spawn_agent"
	KindStopChild      = "stop_child"
	KindSchedule       = "schedule"
	KindScheduleCancel = "schedule_cancel"
	KindCron           = "cron"
	KindCronCancel     = "cron_cancel"
	KindRunInstruction = "run_instruction"
	KindStop           = "stop"
)

// Emit publishes Signal. Cmd completes the signal deterministically: an
// empty id becomes <origin-id>.<index> (index: the directive's position in
// Cmd's output), an empty source SourceOf(agent id), a zero time the
// origin's time, and it adds the causationid (and correlationid) extension.
// Log form: {"kind":"emit","signal":{CloudEvent},"dispatch":{...}}.
type Emit struct {
	Signal bus.Signal `json:"signal"`
	// Dispatch says where the signal goes; nil means the agent's default
	// (jido.emit.<agent-id>.<type>).
	Dispatch *Dispatch `json:"dispatch,omitempty"`
}

// Dispatch names a destination for an emitted signal. The runtime defines
// the adapters it serves (for example "nats" with a subject as Target, or
// "agent" with an agent id); this package only carries the value.
type Dispatch struct {
	Adapter string            `json:"adapter"`
	Target  string            `json:"target,omitempty"`
	Options map[string]string `json:"options,omitempty"`
}

// Error reports a failure while the agent decided; the runtime hands it to
// the agent's error policy. Context says where it arose (the Context
// constants), Action which action was involved, when one was.
// Log form: {"kind":"error","error":{"type":…,"message":…},"context":…,"action":…}.
type Error struct {
	Err     *bus.Error `json:"error"`
	Context string     `json:"context"`
	Action  string     `json:"action,omitempty"`
	// Refused says the input was refused (Refuse): the runtime commits
	// no decision that holds such an Error, so it has no log form.
	Refused bool `json:"-"`
}

// Restart policies of a spawned child, as in OTP.
const (
	RestartPermanent = "permanent" // always restarted
	RestartTransient = "transient" // restarted only after an abnormal exit
	RestartTemporary = "temporary" // never restarted
)

// SpawnAgent starts a child agent of the registered type Type, tracked by
// Tag. Opts are the child's start options (initial_state, error_policy, an
// explicit id…); Meta travels to the child with its parent reference.
// Log form: {"kind":"spawn_agent","type":…,"tag":…,"opts":{},"meta":{},"restart":…}.
type SpawnAgent struct {
	Type    string         `json:"type"`
	Tag     string         `json:"tag"`
	Opts    map[string]any `json:"opts,omitempty"`
	Meta    map[string]any `json:"meta,omitempty"`
	Restart string         `json:"restart,omitempty"`
}

// StopChild stops the child spawned under Tag.
// Log form: {"kind":"stop_child","tag":…,"reason":…}.
type StopChild struct {
	Tag    string `json:"tag"`
	Reason string `json:"reason,omitempty"`
}

// Schedule delivers Signal to the agent itself after Delay, counted from
// the origin's time. The log keeps whole milliseconds, so Cmd rounds Delay
// up to one. Log form: {"kind":"schedule","delay_ms":…,"signal":{CloudEvent}}.
//
// A schedule of a plain message gives Message instead of Signal (any value
// JSON encodes, JSON null aside): Cmd wraps it in a TypeScheduled signal
// whose data is {"message": Message} (the schema jido.scheduled) and
// clears Message, so the log form, recovery and replay are those of any
// other schedule. Giving both, or neither, is an invalid directive.
type Schedule struct {
	Delay   time.Duration
	Signal  bus.Signal
	Message any
}

// TypeScheduled is the type of the signal a Schedule of a plain message
// delivers.
const TypeScheduled = "jido.scheduled"

type scheduleJSON struct {
	DelayMS int64      `json:"delay_ms"`
	Signal  bus.Signal `json:"signal"`
}

// MarshalJSON writes the log form.
func (s Schedule) MarshalJSON() ([]byte, error) {
	return json.Marshal(scheduleJSON{DelayMS: s.Delay.Milliseconds(), Signal: s.Signal})
}

// UnmarshalJSON reads the log form.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	var j scheduleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.DelayMS < 0 {
		return fmt.Errorf("schedule: delay_ms %d is negative", j.DelayMS)
	}
	*s = Schedule{Delay: time.Duration(j.DelayMS) * time.Millisecond, Signal: j.Signal}
	return nil
}

// ScheduleCancel withdraws the Schedule whose signal has id SignalID: the
// signal is not delivered, now or after a restart (a schedule stands
// until its signal is committed or it is cancelled). A schedule already
// delivered, or unknown, is left alone.
// Log form: {"kind":"schedule_cancel","signal_id":…}.
type ScheduleCancel struct {
	SignalID string `json:"signal_id"`
}

// Cron delivers Signal to the agent itself on the standard 5-field cron
// expression Expr, in the IANA time zone TZ (UTC when empty); without a
// Signal each firing delivers jido.cron_tick. A job with the same JobID is
// replaced. Log form: {"kind":"cron","job_id":…,"expr":…,"signal":{…},"tz":…}.
type Cron struct {
	JobID  string      `json:"job_id"`
	Expr   string      `json:"expr"`
	Signal *bus.Signal `json:"signal,omitempty"`
	TZ     string      `json:"tz,omitempty"`
}

// CronCancel cancels the cron job JobID.
// Log form: {"kind":"cron_cancel","job_id":…}.
type CronCancel struct {
	JobID string `json:"job_id"`
}

// RunInstruction runs Instruction outside the agent's decision step (work
// that may take time or touch the world) and feeds its result back through
// Cmd as the params of ResultAction. Cmd gives the instruction the origin of
// the instruction that returned it when it has none.
// Log form: {"kind":"run_instruction","instruction":{…},"result_action":…}.
type RunInstruction struct {
	Instruction  Instruction `json:"instruction"`
	ResultAction string      `json:"result_action,omitempty"`
}

// Stop stops the agent; directives queued behind it are dropped.
// Log form: {"kind":"stop","reason":…}.
type Stop struct {
	Reason string `json:"reason,omitempty"`
}

func (Emit) DirectiveKind() string           { return KindEmit }
func (Error) DirectiveKind() string          { return KindError }
func (SpawnAgent) DirectiveKind() string     { return KindSpawnAgent }
func (StopChild) DirectiveKind() string      { return KindStopChild }
func (Schedule) DirectiveKind() string       { return KindSchedule }
func (ScheduleCancel) DirectiveKind() string { return KindScheduleCancel }
func (Cron) DirectiveKind() string           { return KindCron }
func (CronCancel) DirectiveKind() string     { return KindCronCancel }
func (RunInstruction) DirectiveKind() string { return KindRunInstruction }
func (Stop) DirectiveKind() string           { return KindStop }

// NewSignal returns a signal of type signalType with data encoded as JSON,
// for an action to put in an Emit, Schedule or Cron. Its id, source and
// time are left for Cmd to derive.
func NewSignal(signalType string, data any) (bus.Signal, error) {
	return bus.NewJSONSignal(signalType, data)
}

// NewEmit returns an Emit of a new signal (see NewSignal) to the default
// dispatch.
func NewEmit(signalType string, data any) (Emit, error) {
	s, err := NewSignal(signalType, data)
	return Emit{Signal: s}, err
}

// errorDirective builds an Error directive from err, keeping err's type
// when it carries one and using fallback otherwise.
// An err made by Refuse gives a Refused directive.
func errorDirective(err error, context, action, fallback string) Error {
	refused := IsRefusal(err)
	if _, typed := errors.AsType[*bus.Error](err); typed {
		return Error{Err: bus.AsError(err), Context: context, Action: action, Refused: refused}
	}
	return Error{Err: &bus.Error{Type: fallback, Message: err.Error()}, Context: context, Action: action, Refused: refused}
}

func newError(reason, context, action, format string, args ...any) Error {
	return Error{Err: bus.Errorf(reason, format, args...), Context: context, Action: action}
}

package runtime

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// What the runtime writes to the log besides the signals themselves. Every
// record is a CloudEvent whose type starts with "jido.", so projections
// over an agent's own signal types never see them. The data layouts are
// part of the on-disk format: members may be added, never renamed.
const (
	// TypeStarted is the first entry of an agent's stream: its type, id,
	// initial state, options and parent. It is also emitted on
	// <prefix>.emit.<id>.jido.agent.started.
	TypeStarted = "jido.agent.started"
	// TypeCmd follows each signal an agent accepted: the agent's new
	// version and the directives Cmd returned, committed in the same batch
	// as the signal.
	TypeCmd = "jido.agent.cmd"
	// TypeEffects records how directives were executed (ok, async, stop,
	// failed, dropped), so recovery knows which ones still have to run.
	TypeEffects = "jido.agent.effects"
	// TypeStopped is the last entry of a stopped agent's stream.
	TypeStopped = "jido.agent.stopped"

	// TypeRegistered and TypeDeregistered make up IndexStream, the list of
	// agents that were started and not stopped.
	TypeRegistered   = "jido.agent.registered"
	TypeDeregistered = "jido.agent.deregistered"

	// Lifecycle signals delivered to agents (when one of their routes
	// matches) and emitted on <prefix>.emit.<id>.<type>.
	TypeChildStarted      = "jido.agent.child.started"
	TypeChildExit         = "jido.agent.child.exit"
	TypeOrphaned          = "jido.agent.orphaned"
	TypeError             = "jido.agent.error"
	TypeCronTick          = "jido.cron_tick"
	TypeInstructionResult = "jido.agent.instruction.result"
)

// IndexStream lists every agent started and not stopped, in start order;
// recovery folds it to know which agents to bring back.
const IndexStream = "runtime/agents"

// recordSource is the CloudEvents source of the runtime's own records.
const recordSource = "jido-bus:runtime"

// ParentRef names an agent's parent and the tag the parent spawned it
// under.
type ParentRef struct {
	ID   string         `json:"id"`
	Tag  string         `json:"tag"`
	Meta map[string]any `json:"meta,omitempty"`
}

type startedRecord struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Stream       string          `json:"stream"`
	InitialState json.RawMessage `json:"initial_state,omitempty"`
	Options      Options         `json:"options"`
	Parent       *ParentRef      `json:"parent,omitempty"`
	Restart      string          `json:"restart,omitempty"`

	// seq is where the record sits in its stream (readStarted fills it
	// in): the incarnation it starts.
	seq uint64
}

type cmdRecord struct {
	// Signal is the id of the signal decided, the entry just before.
	Signal string `json:"signal"`
	// Version is the agent's version after the signal: how many signals
	// it has accepted.
	Version uint64 `json:"version"`
	// Directives are the directives' log forms (agents.DirectiveCodec).
	Directives json.RawMessage `json:"directives"`
	// Count is how many directives there are, so recovery can tell a
	// decision whose directives all ran without decoding them. Records
	// written before it existed have none.
	Count *int `json:"count,omitempty"`
	// Effects are outcomes of directives of earlier versions, recorded
	// with this decision instead of in an effects record of their own:
	// while signals keep coming, that saves an append per signal.
	Effects []effectResult `json:"effects,omitempty"`
}

// Outcomes of a directive's execution, as TypeEffects records them.
const (
	OutcomeOK      = "ok"      // done
	OutcomeAsync   = "async"   // started; its result arrives later as a signal
	OutcomeStop    = "stop"    // it stopped the agent
	OutcomeFailed  = "failed"  // the executor returned an error
	OutcomeDropped = "dropped" // never run: the agent stopped first
	OutcomeUnknown = "unknown" // no executor for its kind; recorded and skipped
)

type effectsRecord struct {
	Results []effectResult `json:"results"`
}

type effectResult struct {
	Version uint64 `json:"version"` // the cmd record's version
	Index   int    `json:"index"`   // position in its directive list
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`

	// gen is the emitFlusher generation the outcome waits for: it is
	// recorded only once what the directive published reached NATS.
	gen uint64
}

type stoppedRecord struct {
	Reason string `json:"reason"`
}

type indexRecord struct {
	ID     string     `json:"id"`
	Type   string     `json:"type,omitempty"`
	Stream string     `json:"stream,omitempty"`
	Parent *ParentRef `json:"parent,omitempty"`
	Reason string     `json:"reason,omitempty"`
	// Seq is the stream sequence of the started record of the incarnation
	// registered or deregistered; records written before incarnations
	// have none, which means 1.
	Seq uint64 `json:"seq,omitempty"`
}

// record builds a runtime record. id must make the record unique in its
// stream and stable across retries: the log drops an event whose source
// and id it already holds, which is what makes a retried commit harmless.
func record(typ, id, subject string, at time.Time, data any) (bus.Signal, error) {
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource(recordSource)
	if subject != "" {
		s.SetSubject(subject)
	}
	s.SetTime(at)
	if err := bus.SetJSONData(&s, data); err != nil {
		return bus.Signal{}, fmt.Errorf("encode %s record: %w", typ, err)
	}
	return s, nil
}

// cmdRecordID ties a cmd record to the signal it decides, so a signal that
// is delivered twice is recognised with its record as one duplicate batch.
func cmdRecordID(sig *bus.Signal) string { return "cmd:" + signalSource(sig) + "#" + sig.ID() }

// lifecycleSignal builds a lifecycle signal about agent id. Its id derives
// from what caused it, so a redelivery after recovery carries the same id.
func lifecycleSignal(typ, id, agentID string, at time.Time, data any) (bus.Signal, error) {
	s, err := agents.NewSignal(typ, data)
	if err != nil {
		return bus.Signal{}, err
	}
	s.SetID(id)
	s.SetSource(agents.SourceOf(agentID))
	s.SetTime(at)
	return s, nil
}

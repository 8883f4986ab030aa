package agents

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/bus"
)

// SourceOf returns the CloudEvents source of signals agent id emits:
// "/agent/<id>".
func SourceOf(agentID string) string { return "/agent/" + agentID }

// DeriveID returns the id of the signal carried by the directive at index
// in the output of Cmd for an instruction whose origin id is originID:
// "<originID>.<index>". Replaying the same signal derives the same ids, so
// consumers can deduplicate what a recovered agent emits again.
func DeriveID(originID string, index int) string {
	return originID + "." + strconv.Itoa(index)
}

// maxKeyID is the longest origin id OriginKey keeps whole.
const maxKeyID = 64

// OriginKey returns what the ids an agent derives from origin o start
// with, for agent agentID: o's id when the agent itself is its source (or
// it has none), else o's id, "~" and a short hash of o's source and id —
// ids are unique per source, so inputs with one id from two sources must
// not derive the same ids. An id longer than 64 bytes is cut to its first
// 40 and the hash added, so a key stays short. The key is a function of o
// alone: replaying the input derives it again.
func OriginKey(o Origin, agentID string) string {
	if ownOrigin(o, agentID) && len(o.ID) <= maxKeyID {
		return o.ID
	}
	return string(appendOriginKey(make([]byte, 0, 56), o, agentID))
}

func ownOrigin(o Origin, agentID string) bool {
	return o.Source == "" || strings.HasPrefix(o.Source, "/agent/") && o.Source[len("/agent/"):] == agentID
}

// appendOriginKey appends OriginKey(o, agentID) to b. The hash is FNV-1a
// (hash/fnv's New64a) computed in place: through hash.Hash64 it cost
// two allocations per emitted signal (the hasher, the bytes written).
func appendOriginKey(b []byte, o Origin, agentID string) []byte {
	if ownOrigin(o, agentID) && len(o.ID) <= maxKeyID {
		return append(b, o.ID...)
	}
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(o.Source); i++ {
		h = (h ^ uint64(o.Source[i])) * prime64
	}
	h *= prime64 // the 0 byte between source and id: h ^ 0 == h
	for i := 0; i < len(o.ID); i++ {
		h = (h ^ uint64(o.ID[i])) * prime64
	}
	id := o.ID
	if len(id) > maxKeyID {
		cut := 40
		for cut > 0 && !utf8.RuneStart(id[cut]) {
			cut--
		}
		id = id[:cut]
	}
	b = append(b, id...)
	b = append(b, '~')
	return strconv.AppendUint(b, h, 36)
}

// derivedID returns DeriveID(base, index) for the base completeSignal
// derives from o — OriginKey(o, agentID), or the agent id when o has no
// id — built in one allocation.
func derivedID(o Origin, agentID string, index int) string {
	var buf [96]byte
	b := buf[:0]
	if o.ID == "" {
		b = append(b, agentID...)
	} else {
		b = appendOriginKey(b, o, agentID)
	}
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(index), 10)
	return string(b)
}

// finalize completes and checks the directives: the determinism helpers
// fill in what actions leave out (ids, sources, times, causation), and a
// directive that would fail when executed is replaced here, where the
// failure is still part of the agent's decision, by an Error directive.
func (r *run) finalize() []Directive {
	if len(r.out) == 0 {
		return nil
	}
	out := r.out
	for i, dir := range out {
		d, err := r.complete(dir, r.originOf(i), i)
		if err != nil {
			action := ""
			if ri, ok := dir.(RunInstruction); ok {
				action = ri.Instruction.Action
			}
			d = errorDirective(err, ContextDirective, action, ReasonInvalidDirective)
		}
		out[i] = d
	}
	r.out = nil // out belongs to the caller now
	return out
}

func (r *run) complete(dir Directive, origin Origin, index int) (Directive, error) {
	switch d := dir.(type) {
	case nil:
		return nil, bus.Errorf(ReasonInvalidDirective, "directive %d is nil", index)
	case Emit:
		return r.completeEmit(d, origin, index)
	case *Emit:
		if d == nil {
			return nil, bus.Errorf(ReasonInvalidDirective, "directive %d is a nil *Emit", index)
		}
		return r.completeEmit(*d, origin, index)
	case Schedule:
		if d.Delay < 0 {
			return nil, bus.Errorf(ReasonInvalidDirective, "schedule: delay %v is negative", d.Delay)
		}
		// The log keeps whole milliseconds; round up so the timer never
		// fires before the delay asked for, and so the directive Cmd returns
		// equals the one read back from the log.
		d.Delay = (d.Delay + time.Millisecond - 1).Truncate(time.Millisecond)
		if d.Message != nil {
			wrapped, err := scheduledSignal(d)
			if err != nil {
				return nil, err
			}
			d.Signal, d.Message = wrapped, nil
		}
		sig, err := r.completeSignal(d.Signal, origin, index, "schedule")
		if err != nil {
			return nil, err
		}
		d.Signal = sig
		return d, nil
	case Cron:
		if d.JobID == "" || d.Expr == "" {
			return nil, bus.Errorf(ReasonInvalidDirective, "cron: job_id and expr are required")
		}
		if d.Signal != nil {
			sig, err := r.completeSignal(*d.Signal, origin, index, "cron")
			if err != nil {
				return nil, err
			}
			d.Signal = &sig
		}
		return d, nil
	case ScheduleCancel:
		if d.SignalID == "" {
			return nil, bus.Errorf(ReasonInvalidDirective, "schedule_cancel: signal_id is required")
		}
		return d, nil
	case CronCancel:
		if d.JobID == "" {
			return nil, bus.Errorf(ReasonInvalidDirective, "cron_cancel: job_id is required")
		}
		return d, nil
	case SpawnAgent:
		if d.Type == "" {
			return nil, bus.Errorf(ReasonInvalidDirective, "spawn_agent: type is required")
		}
		if err := bus.ValidateAgentID(d.Tag); err != nil || d.Tag == "" || containsSlash(d.Tag) {
			return nil, bus.Errorf(ReasonInvalidDirective, "spawn_agent: tag %q must be one agent id segment, [A-Za-z0-9][A-Za-z0-9_-]*", d.Tag)
		}
		switch d.Restart {
		case "", RestartPermanent, RestartTransient, RestartTemporary:
		default:
			return nil, bus.Errorf(ReasonInvalidDirective, "spawn_agent: restart %q is not permanent, transient or temporary", d.Restart)
		}
		var err error
		if d.Opts, err = normalizeObjectOrNil(d.Opts); err != nil {
			return nil, bus.Errorf(ReasonInvalidDirective, "spawn_agent: opts: %v", err)
		}
		if d.Meta, err = normalizeObjectOrNil(d.Meta); err != nil {
			return nil, bus.Errorf(ReasonInvalidDirective, "spawn_agent: meta: %v", err)
		}
		return d, nil
	case StopChild:
		if d.Tag == "" {
			return nil, bus.Errorf(ReasonInvalidDirective, "stop_child: tag is required")
		}
		return d, nil
	case RunInstruction:
		if d.Instruction.Action == "" {
			return nil, bus.Errorf(ReasonInvalidDirective, "run_instruction: the instruction names no action")
		}
		if d.Instruction.Origin == (Origin{}) {
			d.Instruction.Origin = origin
		}
		return d, nil
	case Error:
		if d.Err == nil {
			d.Err = bus.Errorf(ReasonActionFailed, "error directive without an error")
		}
		if d.Context == "" {
			d.Context = ContextAction
		}
		return d, nil
	}
	return dir, nil
}

func (r *run) completeEmit(d Emit, origin Origin, index int) (Directive, error) {
	sig, err := r.completeSignal(d.Signal, origin, index, "emit")
	if err != nil {
		return nil, err
	}
	if d.Dispatch != nil && d.Dispatch.Adapter == "" {
		return nil, bus.Errorf(ReasonInvalidDirective, "emit %s: dispatch has no adapter", sig.Type())
	}
	d.Signal = sig
	return d, nil
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func normalizeObjectOrNil(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	return normalizeObject(m)
}

// completeSignal returns a copy of sig with its id, source, time,
// causation, correlation and trace context filled in from the origin, checked as a valid signal. The copy
// matters: an action may return the same signal value twice, and the
// sdk's event shares its attribute storage between copies.
// scheduledSignal wraps a Schedule's plain message in the TypeScheduled
// signal it delivers (seed 000: a message that is not a signal arrives as
// a "scheduled" signal carrying it).
func scheduledSignal(d Schedule) (bus.Signal, error) {
	if d.Signal.Context != nil {
		return bus.Signal{}, bus.Errorf(ReasonInvalidDirective, "schedule: give a Signal or a Message, not both")
	}
	sig, err := NewSignal(TypeScheduled, map[string]any{"message": d.Message})
	if err != nil {
		return bus.Signal{}, bus.Errorf(ReasonInvalidDirective, "schedule: the message does not encode as JSON: %v", err)
	}
	return sig, nil
}

func (r *run) completeSignal(sig bus.Signal, o Origin, index int, what string) (bus.Signal, error) {
	if sig.Context == nil {
		return bus.Signal{}, bus.Errorf(ReasonInvalidDirective, "%s: the signal is empty; build it with NewSignal", what)
	}
	if sig.ID() == "" && !bus.HasSource(&sig) && len(sig.FieldErrors) == 0 {
		// The common case: the action left id and source to Cmd. FillSignal
		// builds the same signal as the sdk's setters below, without
		// parsing the source again for every signal; it declines what it
		// cannot reproduce exactly, which then takes the general route.
		f := bus.Fill{ID: derivedID(o, r.agentID, index), Source: r.source(), Time: o.Time, CausationID: o.ID, CorrelationID: o.CorrelationID, TraceParent: o.TraceParent}
		if s, ok := bus.FillSignal(sig, f); ok {
			if err := checkDerived(&s, what); err != nil {
				return bus.Signal{}, err
			}
			return s, nil
		}
	}
	s := sig.Clone()
	// A signal whose id and source Cmd derives needs only the checks below;
	// one that arrives with its own needs the sdk's full validation too
	// (a source must be a URI reference). The full check costs about a
	// third of a counter step, so it is kept for where it can find
	// something.
	full := s.ID() != "" || s.Source() != ""
	if s.ID() == "" {
		s.SetID(derivedID(o, r.agentID, index))
	}
	if s.Source() == "" {
		s.SetSource(SourceOf(r.agentID))
	}
	if s.Time().IsZero() && !o.Time.IsZero() {
		s.SetTime(o.Time)
	}
	ext := s.Extensions()
	if _, ok := ext[bus.ExtCausationID]; !ok && o.ID != "" {
		s.SetExtension(bus.ExtCausationID, o.ID)
	}
	if _, ok := ext[bus.ExtCorrelationID]; !ok && o.CorrelationID != "" {
		s.SetExtension(bus.ExtCorrelationID, o.CorrelationID)
	}
	if _, ok := ext[bus.ExtTraceParent]; !ok && o.TraceParent != "" {
		s.SetExtension(bus.ExtTraceParent, o.TraceParent)
	}
	if full || len(s.FieldErrors) > 0 {
		if err := bus.ValidateSignal(&s, bus.Limits{}); err != nil {
			return bus.Signal{}, bus.Errorf(ReasonInvalidDirective, "%s: %v", what, err)
		}
		return s, nil
	}
	if err := checkDerived(&s, what); err != nil {
		return bus.Signal{}, err
	}
	return s, nil
}

// checkDerived is what a signal whose id, source and time Cmd derived
// still needs checked: the parts the action chose.
func checkDerived(s *bus.Signal, what string) error {
	if s.SpecVersion() != bus.SpecVersion {
		return bus.Errorf(ReasonInvalidDirective, "%s: specversion %q is not %q", what, s.SpecVersion(), bus.SpecVersion)
	}
	if err := bus.ValidateType(s.Type()); err != nil {
		return bus.Errorf(ReasonInvalidDirective, "%s: %v", what, err)
	}
	if len(s.Data()) > bus.DefaultMaxDataBytes {
		return bus.Errorf(ReasonInvalidDirective, "%s: data is %d bytes, the limit is %d", what, len(s.Data()), bus.DefaultMaxDataBytes)
	}
	return nil
}

// source returns the parsed source of the signals the agent emits.
func (r *run) source() bus.Source {
	if r.src == nil {
		r.src = newAgentSource(r.agentID)
	}
	return r.src.source
}

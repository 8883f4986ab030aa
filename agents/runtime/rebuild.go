package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// initialAgent builds the agent an incarnation starts as, from its started
// record. Start, recovery and Replay all build it here — Start from the
// record it is about to commit, not from the request — so the agent a
// start leaves in memory is the one its log rebuilds, byte for byte.
func initialAgent(def *agents.Definition, rec startedRecord) (agents.Agent, error) {
	var initial map[string]any
	if len(rec.InitialState) > 0 {
		if err := json.Unmarshal(rec.InitialState, &initial); err != nil {
			return agents.Agent{}, fmt.Errorf("initial_state of %s agent %s: %w", rec.Type, rec.ID, err)
		}
	}
	a, err := def.New(rec.ID, initial)
	if err != nil {
		return agents.Agent{}, fmt.Errorf("initial_state of %s agent %s: %w", rec.Type, rec.ID, err)
	}
	if a, err = def.Mount(a); err != nil {
		return agents.Agent{}, fmt.Errorf("mount %s agent %s: %w", rec.Type, rec.ID, err)
	}
	return a, nil
}

// decides reports whether cmd record cr decides sig. The record names the
// signal by id, in JSON, where an id that is not valid UTF-8 has each bad
// byte replaced by U+FFFD: such an id is compared as JSON carried it.
func decides(cr *cmdRecord, sig *bus.Signal) bool {
	id := sig.ID()
	if id == cr.Signal {
		return true
	}
	if utf8.ValidString(id) {
		return false
	}
	var carried string
	b, _ := json.Marshal(id) // a string always encodes
	return json.Unmarshal(b, &carried) == nil && carried == cr.Signal
}

// fold rebuilds an agent from the entries of its stream, oldest first:
// every signal followed by its cmd record is decided again through the
// agent's pure logic. It is the one fold over a stream — recovery
// (restore) and Replay run it; Start builds the agent its started record
// says with initialAgent, as the fold does — so the agent a process
// holds, the agent recovery brings back and the agent `log replay` shows
// are the same. What recovery needs beyond the agent (the directives
// still pending, the timers, the errors counted) it collects through
// decided and effects.
type fold struct {
	types *agents.Registry
	// born, when not zero, binds the fold to the incarnation whose started
	// record sits at that sequence (recovery): another started record, or
	// a stopped record, contradicts the index that lists it as running.
	// Zero follows every incarnation (Replay): a started record starts
	// the agent over.
	born uint64
	// refoldFrom is the first sequence whose decisions are refolded; the
	// ones before are only passed to decided (recovery starts from a
	// snapshot that holds them, and reads back to the inputs of the
	// directives it left pending).
	refoldFrom uint64
	// verify decides every signal in full, with its directives, and stops
	// at the first decision that differs from its cmd record (divergence);
	// without it only the state is rebuilt (refold).
	verify bool
	codec  *agents.DirectiveCodec // encodes directives to verify them
	// stream, when known, names the stream in a read error.
	stream string
	// decided, when set, is called after each cmd record; errStopFold
	// ends the fold without an error.
	decided func(d foldedCmd) error
	// effects, when set, is called with the outcomes an effects record or
	// a cmd record carries, and whether that record was refolded.
	effects func(results []effectResult, refolded bool)

	// What the fold rebuilt so far.
	def        *agents.Definition
	started    startedRecord
	agent      agents.Agent
	version    uint64
	lastSignal string      // the id of the last signal refolded
	head       uint64      // the sequence of the last entry read
	signals    int         // how many signals were refolded
	divergence *Divergence // the decision verify found different
	// sig is the signal entry waiting for its cmd record, when hasSig.
	// It is held here, not behind a pointer of its own, because
	// allocating it per signal was a share of recovery's allocations.
	sig    bus.Signal
	hasSig bool
	// records is where cmd and effects records are read into; made when
	// first needed unless the fold is given one (a pooled one: restore).
	records *foldRecords
}

// foldedCmd is a cmd record the fold has read. What it points to is the
// fold's, valid only during the call to decided it is handed to.
type foldedCmd struct {
	entry eventlog.Entry
	rec   *cmdRecord
	// input is the signal it decides, the entry before it; nil when that
	// entry was not read (only before refoldFrom).
	input    *bus.Signal
	kinds    decidedKinds // what its directives hold, when refolded
	refolded bool
}

// recordReader returns the fold's record reader, making it if needed.
func (f *fold) recordReader() *foldRecords {
	if f.records == nil {
		f.records = new(foldRecords)
	}
	return f.records
}

// errStopFold, returned by decided, ends the fold early.
var errStopFold = errors.New("stop the fold")

// run folds entries. Errors name the stream and sequence of the entry.
func (f *fold) run(entries iter.Seq2[eventlog.Entry, error]) error {
	for e, err := range entries {
		if err != nil {
			if f.stream != "" {
				err = fmt.Errorf("read %s: %w", f.stream, err)
			}
			return err
		}
		f.head = e.Seq
		switch e.Event.Type() {
		case TypeStarted:
			err = f.start(&e)
		case TypeStopped:
			if f.born != 0 {
				err = fmt.Errorf("%s/%d: stops the incarnation the index lists as running", e.Stream, e.Seq)
			}
		case TypeCmd:
			err = f.cmd(&e)
		case TypeEffects:
			if f.effects != nil {
				results, err := f.recordReader().effects(e.Event.Data())
				if err != nil {
					return fmt.Errorf("%s/%d: effects record: %w", e.Stream, e.Seq, err)
				}
				f.effects(results, e.Seq >= f.refoldFrom)
			}
		default:
			// A signal: refolded when its cmd record follows.
			f.sig, f.hasSig = e.Event, true
		}
		if errors.Is(err, errStopFold) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	if f.def == nil {
		return fmt.Errorf("no %s record: not an agent's stream", TypeStarted)
	}
	return nil
}

// start begins the incarnation a started record opens: the agent as its
// record says (initialAgent), at version 0.
func (f *fold) start(e *eventlog.Entry) error {
	if f.born != 0 && e.Seq != f.born {
		return fmt.Errorf("%s/%d: starts another incarnation after the one at %d, which was never stopped", e.Stream, e.Seq, f.born)
	}
	var rec startedRecord
	if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
		return fmt.Errorf("%s/%d: started record: %w", e.Stream, e.Seq, err)
	}
	def, ok := f.types.Lookup(rec.Type)
	if !ok {
		return fmt.Errorf("%s/%d: agent type %q is not known here", e.Stream, e.Seq, rec.Type)
	}
	agent, err := initialAgent(def, rec)
	if err != nil {
		return fmt.Errorf("%s/%d: %w", e.Stream, e.Seq, err)
	}
	rec.seq = e.Seq
	f.def, f.started, f.agent, f.version, f.lastSignal = def, rec, agent, 0, ""
	f.sig, f.hasSig = bus.Signal{}, false
	return nil
}

// cmd refolds the signal a cmd record decides (from refoldFrom on).
func (f *fold) cmd(e *eventlog.Entry) error {
	if f.def == nil {
		return fmt.Errorf("%s/%d: a decision before the agent's started record (was the stream truncated?)", e.Stream, e.Seq)
	}
	var input *bus.Signal
	var id string
	if f.hasSig {
		input, id = &f.sig, f.sig.ID()
		f.hasSig = false
	}
	cr, err := f.recordReader().cmd(e.Event.Data(), id)
	if err != nil {
		return fmt.Errorf("%s/%d: cmd record: %w", e.Stream, e.Seq, err)
	}
	d := foldedCmd{entry: *e, rec: cr, input: input, refolded: e.Seq >= f.refoldFrom}
	if d.input != nil && !decides(cr, d.input) {
		d.input = nil
	}
	if d.refolded {
		if d.input == nil {
			return fmt.Errorf("%s/%d: cmd record decides signal %q, which is not the entry before it", e.Stream, e.Seq, cr.Signal)
		}
		d.kinds = glance(cr.Directives)
		if f.verify {
			next, directives := decideSignal(f.agent, *d.input)
			got, err := f.codec.EncodeAll(directives)
			if err != nil {
				return fmt.Errorf("%s/%d: encode directives: %w", e.Stream, e.Seq, err)
			}
			if why := diverges(*cr, f.version+1, got); why != "" {
				f.divergence = &Divergence{Seq: e.Seq, Signal: cr.Signal, Version: cr.Version, Expected: cr.Directives, Got: got, Reason: why}
				return errStopFold
			}
			f.agent = next
		} else {
			f.agent = refold(f.agent, *d.input, d.kinds)
		}
		f.version, f.lastSignal = cr.Version, d.input.ID()
		f.signals++
	}
	if f.decided != nil {
		if err := f.decided(d); err != nil {
			return err
		}
	}
	if f.effects != nil && len(cr.Effects) > 0 {
		f.effects(cr.Effects, d.refolded)
	}
	return nil
}

// decideSignal runs an agent's pure logic on sig. An instruction result
// names the action it feeds (RunInstruction's result_action) and bypasses
// routing; every other signal is routed.
func decideSignal(agent agents.Agent, sig bus.Signal) (agents.Agent, []agents.Directive) {
	if sig.Type() == TypeInstructionResult {
		var res instructionResult
		if err := json.Unmarshal(sig.Data(), &res); err == nil && res.ResultAction != "" {
			params, _ := json.Marshal(map[string]any{"result": res.Result, "error": res.Error, "instruction": res.Instruction})
			return agents.Cmd(agent, agents.Instruction{Action: res.ResultAction, Params: params, Origin: agents.OriginOf(sig)})
		}
	}
	return agents.Step(agent, sig)
}

// refold returns the agent the decision on sig left, which the log holds
// with its directives: the state only, without building the directives
// again and, where the decision shows no Error directive, without
// validating params again (agents.Replay).
func refold(agent agents.Agent, sig bus.Signal, k decidedKinds) agents.Agent {
	if sig.Type() == TypeInstructionResult {
		next, _ := decideSignal(agent, sig)
		return next
	}
	return agents.Replay(agent, sig, agents.ReplayOptions{NoErrors: !k.errors})
}

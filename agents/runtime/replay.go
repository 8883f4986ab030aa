package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// ReplayOptions select what Replay does.
type ReplayOptions struct {
	// To stops after the agent reached this version; zero replays all.
	To uint64
	// Verify compares each decision's recomputed directives and version
	// with the ones in its cmd record and stops at the first divergence.
	Verify bool
	// OnVersion, when set, is called with the state after each version.
	OnVersion func(version uint64, state json.RawMessage)
}

// ReplayResult is what a replay rebuilt.
type ReplayResult struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Version uint64          `json:"version"`
	State   json.RawMessage `json:"state"`
	// Signals is how many signals were decided again.
	Signals int `json:"signals"`
	// Divergence is the first decision that came out differently, when
	// Verify found one.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is a decision that did not come out as the log recorded it:
// the sign of a non-deterministic action (one that reads the clock, draws
// random numbers, or iterates a map where order matters).
type Divergence struct {
	Seq      uint64          `json:"seq"`    // the cmd record's stream sequence
	Signal   string          `json:"signal"` // the signal decided
	Version  uint64          `json:"version"`
	Expected json.RawMessage `json:"expected"` // the directives in the log
	Got      json.RawMessage `json:"got"`      // the directives recomputed
	Reason   string          `json:"reason"`
}

// Replay rebuilds an agent from the entries of its stream, oldest first,
// starting over at each started record (an agent stopped and started
// again under its id: versions count within an incarnation, and To stops
// in the first incarnation that reaches it),
// by running every logged signal through the agent's pure logic again —
// never from a snapshot — the tool for debugging a decision or checking
// that an agent type is deterministic. Without Verify only the state is
// rebuilt, as recovery does (agents.Replay). types names the agent types,
// codec encodes directives as the runtime does (nil means the built-ins).
func Replay(entries iter.Seq2[eventlog.Entry, error], types *agents.Registry, codec *agents.DirectiveCodec, opts ReplayOptions) (ReplayResult, error) {
	if codec == nil {
		codec = agents.NewDirectiveCodec()
	}
	var (
		res    ReplayResult
		def    *agents.Definition
		agent  agents.Agent
		signal *bus.Signal
	)
	for e, err := range entries {
		if err != nil {
			return res, err
		}
		switch e.Event.Type() {
		case TypeStarted:
			var rec startedRecord
			if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
				return res, fmt.Errorf("%s/%d: started record: %w", e.Stream, e.Seq, err)
			}
			var ok bool
			if def, ok = types.Lookup(rec.Type); !ok {
				return res, fmt.Errorf("%s/%d: agent type %q is not known here", e.Stream, e.Seq, rec.Type)
			}
			// A started record opens an incarnation (incarnation.go): the
			// agent starts over, as recovery would rebuild it.
			if agent, err = initialAgent(def, rec); err != nil {
				return res, fmt.Errorf("%s/%d: %w", e.Stream, e.Seq, err)
			}
			res.ID, res.Type, res.Version, signal = rec.ID, rec.Type, 0, nil
		case TypeCmd:
			if def == nil {
				return res, fmt.Errorf("%s/%d: a decision before the agent's started record (was the stream truncated?)", e.Stream, e.Seq)
			}
			var cr cmdRecord
			if err := decodeCmdRecord(e.Event.Data(), &cr); err != nil {
				return res, fmt.Errorf("%s/%d: cmd record: %w", e.Stream, e.Seq, err)
			}
			if signal == nil || !decides(&cr, signal) {
				return res, fmt.Errorf("%s/%d: cmd record decides signal %q, which is not the entry before it", e.Stream, e.Seq, cr.Signal)
			}
			s := &server{agent: agent}
			var next agents.Agent
			if opts.Verify {
				var directives []agents.Directive
				next, directives = s.decide(*signal)
				got, err := codec.EncodeAll(directives)
				if err != nil {
					return res, err
				}
				if d := diverges(cr, res.Version+1, got); d != "" {
					res.Divergence = &Divergence{Seq: e.Seq, Signal: cr.Signal, Version: cr.Version, Expected: cr.Directives, Got: got, Reason: d}
					return finish(res, agent)
				}
			} else {
				// Only the state is wanted: fold as recovery does.
				next = s.refold(*signal, glance(cr.Directives))
			}
			agent, res.Version = next, cr.Version
			res.Signals++
			signal = nil
			if opts.OnVersion != nil {
				st, err := agents.EncodeState(agent.State)
				if err != nil {
					return res, err
				}
				opts.OnVersion(res.Version, st)
			}
			if opts.To != 0 && res.Version >= opts.To {
				return finish(res, agent)
			}
		case TypeEffects, TypeStopped:
		default:
			sig := e.Event
			signal = &sig
		}
	}
	if def == nil {
		return res, fmt.Errorf("no %s record: not an agent's stream", TypeStarted)
	}
	return finish(res, agent)
}

func finish(res ReplayResult, agent agents.Agent) (ReplayResult, error) {
	st, err := agents.EncodeState(agent.State)
	res.State = st
	return res, err
}

// diverges says how a recomputed decision differs from its record, or "".
func diverges(cr cmdRecord, version uint64, got json.RawMessage) string {
	if cr.Version != version {
		return fmt.Sprintf("the log has version %d where the replay reached %d", cr.Version, version)
	}
	if !bytes.Equal(compact(cr.Directives), compact(got)) {
		return "the directives differ"
	}
	return ""
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

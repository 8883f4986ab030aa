package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/jido-bus/jido-bus/agents"
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
	f := &fold{types: types, verify: opts.Verify, codec: codec}
	f.decided = func(foldedCmd) error {
		if opts.OnVersion != nil {
			st, err := agents.EncodeState(f.agent.State)
			if err != nil {
				return err
			}
			opts.OnVersion(f.version, st)
		}
		if opts.To != 0 && f.version >= opts.To {
			return errStopFold
		}
		return nil
	}
	err := f.run(entries)
	res := ReplayResult{ID: f.started.ID, Type: f.started.Type, Version: f.version, Signals: f.signals, Divergence: f.divergence}
	if err != nil {
		return res, err
	}
	return finish(res, f.agent)
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

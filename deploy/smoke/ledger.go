package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Outcome is what the caller learned of one call.
type Outcome int

const (
	// Acked: the node answered ok:true, so the increment is committed and
	// must be in the log exactly once.
	Acked Outcome = iota
	// Refused: the node answered ok:false (unavailable while a partition
	// moves, say). Nothing promised; the check allows it in the log at
	// most once.
	Refused
	// NoAnswer: no reply (timeout, no responders, the CLI's connection
	// lost). It may or may not have been committed: at most once.
	NoAnswer
)

func (o Outcome) String() string {
	return [...]string{"acked", "refused", "no-answer"}[o]
}

// Call is one increment sent by the smoke, by its CloudEvent id.
type Call struct {
	ID      string
	Agent   string
	Phase   string
	Outcome Outcome
	Version int64 // the committed version in an acked reply
	Reply   string
}

// Ledger keeps every call the smoke sent, in order. One goroutine owns it.
type Ledger struct {
	Calls []Call
}

// Record classifies the NATS CLI's result of one call: the raw reply body
// (out) and whether the CLI failed (err, no reply).
func (l *Ledger) Record(id, agent, phase string, out []byte, err error) Call {
	c := Call{ID: id, Agent: agent, Phase: phase, Reply: strings.TrimSpace(string(out))}
	var r struct {
		OK      bool  `json:"ok"`
		Version int64 `json:"version"`
	}
	switch {
	case err != nil:
		c.Outcome = NoAnswer
	case json.Unmarshal(out, &r) != nil:
		// A body that is not a reply (the CLI's own message on stdout)
		// promises nothing.
		c.Outcome = NoAnswer
	case r.OK:
		c.Outcome, c.Version = Acked, r.Version
	default:
		c.Outcome = Refused
	}
	l.Calls = append(l.Calls, c)
	return c
}

// Count returns how many calls had outcome o in phase (all phases when
// phase is empty).
func (l *Ledger) Count(phase string, o Outcome) int {
	n := 0
	for _, c := range l.Calls {
		if c.Outcome == o && (phase == "" || c.Phase == phase) {
			n++
		}
	}
	return n
}

// AgentLog is what the cluster says of one counter at the end: the ids of
// the increment entries in its stream (in log order, repeats kept) and
// the count in its state.
type AgentLog struct {
	Increments []string
	Count      int64
}

// Check holds the ledger against the log and returns every violation:
// an acknowledged call missing from its agent's log or there twice, any
// id there twice, two acknowledgements naming the same version of one
// agent, a logged increment the smoke never sent, and a state whose
// count is not the number of increments in the log. Empty means nothing
// acknowledged was lost or doubled.
func (l *Ledger) Check(logs map[string]AgentLog) []string {
	var bad []string
	sent := map[string]Call{}
	for _, c := range l.Calls {
		sent[c.ID] = c
	}
	agents := make([]string, 0, len(logs))
	for a := range logs {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	seen := map[string]int{}
	for _, a := range agents {
		lg := logs[a]
		for _, id := range lg.Increments {
			seen[id]++
			if c, ok := sent[id]; !ok {
				bad = append(bad, fmt.Sprintf("%s: increment %s in the log was never sent by this smoke", a, id))
			} else if c.Agent != a {
				bad = append(bad, fmt.Sprintf("%s: increment %s was sent to %s", a, id, c.Agent))
			}
		}
		if int64(len(lg.Increments)) != lg.Count {
			bad = append(bad, fmt.Sprintf("%s: state count %d, but %d increments in the log", a, lg.Count, len(lg.Increments)))
		}
	}
	versions := map[string]string{}
	for _, c := range l.Calls {
		n := seen[c.ID]
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s: %s call %s is in the log %d times", c.Agent, c.Outcome, c.ID, n))
		}
		if c.Outcome != Acked {
			continue
		}
		if n == 0 {
			bad = append(bad, fmt.Sprintf("%s: acknowledged call %s (%s, reply %s) is not in the log", c.Agent, c.ID, c.Phase, c.Reply))
		}
		key := fmt.Sprintf("%s@%d", c.Agent, c.Version)
		if other, dup := versions[key]; dup {
			bad = append(bad, fmt.Sprintf("%s: calls %s and %s were both acknowledged as version %d", c.Agent, other, c.ID, c.Version))
		}
		versions[key] = c.ID
	}
	return bad
}

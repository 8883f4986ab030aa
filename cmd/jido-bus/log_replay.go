package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

func newLogReplayCmd() *cobra.Command {
	var (
		f        logFlags
		to       uint64
		verify   bool
		diffFlag []uint
	)
	cmd := &cobra.Command{
		Use:   "replay STREAM",
		Short: "Rebuild an agent's state by running its logged signals again",
		Long: `Replay rebuilds the agent whose stream is STREAM (agent/<id>, or
conversation/<project>/<conversation>) by deciding every signal in it again
with the agent type's logic — never from a snapshot — and prints the state.

Positions are stream sequences, as everywhere (the SEQ column of 'log
show', the first column of 'conv show', conv show --at and conv fork
--at): --to SEQ stops after the entry SEQ, with the signal there decided
(its decision is recorded in the entry after it), and prints the state
then. --diff A B (or --diff A,B) prints what changed in the state
between after entry A and after entry B. The output also gives the
agent's version there: how many signals it has decided (what a call's
reply reports as "version").
--verify compares each recomputed decision (its directives and version)
with the one the log recorded and reports the first divergence: the
sequence, what the log says and what the replay got. That is how a
non-deterministic action (one reading the clock, drawing random numbers)
shows itself. It exits with code 2 when it finds one.`,
		Example: `  jido-bus log replay agent/c1
  jido-bus log replay agent/c1 --to 4              # the state after the entry at seq 4
  jido-bus log replay agent/c1 --verify
  jido-bus log replay agent/c1 --diff 2 6
  jido-bus log replay conversation/demo/c1 --to 12   # the seq conv show printed beside an event`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			stream := args[0]
			diff := make([]uint64, len(diffFlag))
			for i, v := range diffFlag {
				diff[i] = uint64(v)
			}
			if len(args) == 2 {
				// --diff A B: the flag took A, B is left as an argument.
				b, err := strconv.ParseUint(args[1], 10, 64)
				if len(diff) != 1 || err != nil {
					return fmt.Errorf("unexpected argument %q: replay takes one stream (for two positions to compare, --diff A B)", args[1])
				}
				diff = append(diff, b)
			}
			if len(diff) != 0 && len(diff) != 2 {
				return fmt.Errorf("--diff takes two stream sequences: --diff A B")
			}
			ctx := cmd.Context()
			b, closeBackend, err := f.openBackend(ctx, false)
			if err != nil {
				return err
			}
			defer closeBackend()
			r, err := newReplayer(ctx, b, stream, verify)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(diff) == 2 {
				slices.Sort(diff)
				var states [2]replayed
				for i, at := range diff {
					if states[i], err = r.replay(at); err != nil {
						return err
					}
				}
				return printDiff(out, stream, states, f.json)
			}
			res, err := r.replay(to)
			if err != nil {
				return err
			}
			if f.json {
				if err := writeJSONLine(cmd, res); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%s: %s agent %s after seq %d, at version %d (%d signals decided again)\n", stream, res.Type, res.ID, res.Seq, res.Version, res.Signals)
				if d := res.Divergence; d != nil {
					fmt.Fprintf(out, "DIVERGED at seq %d (signal %s, version %d): %s\n  log:    %s\n  replay: %s\n", d.Seq, d.Signal, d.Version, d.Reason, d.Expected, d.Got)
				} else if verify {
					fmt.Fprintln(out, "verified: every decision came out as the log recorded it")
				}
				fmt.Fprintf(out, "state: %s\n", res.State)
			}
			if res.Divergence != nil {
				return exitError{code: 2, err: fmt.Errorf("%s diverges from its log at seq %d", stream, res.Divergence.Seq)}
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"id","type","seq","version","state":{…},"signals":N,
"divergence"?:{"seq","signal","version","expected","got","reason"}}: seq is
the last entry replayed; with --diff,
{"stream","from":A,"to":B,"from_version","to_version","changes":[{"path","before"?,"after"?}…]}.`)
	cmd.Flags().Uint64Var(&to, "to", 0, "stop after the entry at this stream `SEQ` (log show's SEQ column, conv show's first; 0: replay everything)")
	cmd.Flags().BoolVar(&verify, "verify", false, "compare each recomputed decision with the logged one; exit 2 at the first divergence")
	cmd.Flags().UintSliceVar(&diffFlag, "diff", nil, "print the state change between after stream sequences A and B: --diff A B, --diff A,B or --diff A --diff B")
	return cmd
}

// pages reads a whole stream through the backend, a page at a time.
func pages(ctx context.Context, b logBackend, stream string) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		req := logapi.ReadRequest{Stream: stream, From: 1}
		for {
			page, err := b.Read(ctx, req)
			if err != nil {
				yield(eventlog.Entry{}, readError(stream, req.From, err))
				return
			}
			for _, pe := range page.Entries {
				var sig bus.Signal
				if err := json.Unmarshal(pe.Event, &sig); err != nil {
					yield(eventlog.Entry{}, fmt.Errorf("%s/%d: %w", stream, pe.Seq, err))
					return
				}
				if !yield(eventlog.Entry{Stream: pe.Stream, Seq: pe.Seq, GlobalSeq: pe.GlobalSeq, Time: pe.Time, Event: sig}, nil) {
					return
				}
			}
			if len(page.Damaged) > 0 {
				yield(eventlog.Entry{}, page.Damaged[0])
				return
			}
			if !page.More {
				return
			}
			req.From = page.Next
		}
	}
}

// printDiff prints the members that differ between two replayed states,
// by path.
func printDiff(w io.Writer, stream string, states [2]replayed, asJSON bool) error {
	before, after := flatten(states[0].State), flatten(states[1].State)
	type change struct {
		Path   string `json:"path"`
		Before any    `json:"before,omitempty"`
		After  any    `json:"after,omitempty"`
	}
	var changes []change
	paths := map[string]bool{}
	for p := range before {
		paths[p] = true
	}
	for p := range after {
		paths[p] = true
	}
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		x, inA := before[p]
		y, inB := after[p]
		if inA && inB && x == y {
			continue
		}
		c := change{Path: p}
		if inA {
			c.Before = json.RawMessage(x)
		}
		if inB {
			c.After = json.RawMessage(y)
		}
		changes = append(changes, c)
	}
	if asJSON {
		if changes == nil {
			changes = []change{}
		}
		return writeJSON(w, struct {
			Stream      string   `json:"stream"`
			From        uint64   `json:"from"`
			To          uint64   `json:"to"`
			FromVersion uint64   `json:"from_version"`
			ToVersion   uint64   `json:"to_version"`
			Changes     []change `json:"changes"`
		}{stream, states[0].Seq, states[1].Seq, states[0].Version, states[1].Version, changes})
	}
	fmt.Fprintf(w, "%s: state change from after seq %d (version %d) to after seq %d (version %d)\n", stream, states[0].Seq, states[0].Version, states[1].Seq, states[1].Version)
	if len(changes) == 0 {
		fmt.Fprintln(w, "  (no change)")
	}
	for _, c := range changes {
		switch {
		case c.Before == nil:
			fmt.Fprintf(w, "  + %s: %s\n", c.Path, c.After)
		case c.After == nil:
			fmt.Fprintf(w, "  - %s: %s\n", c.Path, c.Before)
		default:
			fmt.Fprintf(w, "  ~ %s: %s -> %s\n", c.Path, c.Before, c.After)
		}
	}
	return nil
}

// flatten maps every leaf of a JSON document to its path ("/a/b/0").
func flatten(doc json.RawMessage) map[string]string {
	out := map[string]string{}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return out
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out[path] = "{}"
			}
			for k, e := range x {
				walk(path+"/"+k, e)
			}
		case []any:
			if len(x) == 0 {
				out[path] = "[]"
			}
			for i, e := range x {
				walk(path+"/"+strconv.Itoa(i), e)
			}
		default:
			b, _ := json.Marshal(x)
			out[path] = string(b)
		}
	}
	walk("", v)
	return out
}

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

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/node"
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

--to N stops at version N (the state after the agent's Nth signal).
--verify compares each recomputed decision (its directives and version)
with the one the log recorded and reports the first divergence: the
sequence, what the log says and what the replay got. That is how a
non-deterministic action (one reading the clock, drawing random numbers)
shows itself. It exits with code 2 when it finds one.
--diff A B (or --diff A,B) prints what changed in the state between
versions A and B.`,
		Example: `  jido-bus log replay agent/c1
  jido-bus log replay agent/c1 --to 3
  jido-bus log replay agent/c1 --verify
  jido-bus log replay agent/c1 --diff 2 5`,
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
					return fmt.Errorf("unexpected argument %q: replay takes one stream (for two versions to compare, --diff A B)", args[1])
				}
				diff = append(diff, b)
			}
			if len(diff) != 0 && len(diff) != 2 {
				return fmt.Errorf("--diff takes two versions: --diff A B")
			}
			ctx := cmd.Context()
			b, closeBackend, err := f.openBackend(ctx, false)
			if err != nil {
				return err
			}
			defer closeBackend()
			types, err := node.AgentTypes(nil)
			if err != nil {
				return err
			}
			codec, err := node.Directives()
			if err != nil {
				return err
			}
			opts := runtime.ReplayOptions{To: to, Verify: verify}
			states := map[uint64]json.RawMessage{}
			if len(diff) == 2 {
				slices.Sort(diff)
				opts.To = diff[1]
				opts.OnVersion = func(v uint64, st json.RawMessage) {
					if v == diff[0] || v == diff[1] {
						states[v] = st
					}
				}
			}
			res, err := runtime.Replay(pages(ctx, b, stream), types, codec, opts)
			if err != nil {
				return fmt.Errorf("replay %s: %w", stream, err)
			}
			// --to and --diff past the last version are one mistake with
			// one answer (a divergence stops the replay early: that is
			// reported below instead).
			if past := opts.To; res.Divergence == nil && past > res.Version {
				if len(diff) == 2 && diff[0] > res.Version {
					past = diff[0]
				}
				return fmt.Errorf("replay %s: version %d is past the head of %s, version %d (the last the log holds); ask for %d or less", stream, past, stream, res.Version, res.Version)
			}
			out := cmd.OutOrStdout()
			if len(diff) == 2 {
				return printDiff(out, stream, diff[0], diff[1], states, f.json)
			}
			if f.json {
				if err := writeJSONLine(cmd, res); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%s: %s agent %s at version %d (%d signals decided again)\n", stream, res.Type, res.ID, res.Version, res.Signals)
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
	documentJSON(cmd, `{"id","type","version","state":{…},"signals":N,
"divergence"?:{"seq","signal","version","expected","got","reason"}}; with
--diff, {"stream","from":A,"to":B,"changes":[{"path","before"?,"after"?}…]}.`)
	cmd.Flags().Uint64Var(&to, "to", 0, "stop at this version (0: replay everything)")
	cmd.Flags().BoolVar(&verify, "verify", false, "compare each recomputed decision with the logged one; exit 2 at the first divergence")
	cmd.Flags().UintSliceVar(&diffFlag, "diff", nil, "print the state change between versions A and B: --diff A B, --diff A,B or --diff A --diff B")
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

// printDiff prints the members that differ between two states, by path.
func printDiff(w io.Writer, stream string, a, b uint64, states map[uint64]json.RawMessage, asJSON bool) error {
	for _, v := range []uint64{a, b} {
		if _, ok := states[v]; !ok {
			return fmt.Errorf("%s never reached version %d", stream, v)
		}
	}
	before, after := flatten(states[a]), flatten(states[b])
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
		return writeJSON(w, map[string]any{"stream": stream, "from": a, "to": b, "changes": changes})
	}
	fmt.Fprintf(w, "%s: state change from version %d to %d\n", stream, a, b)
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

package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// maxStopTree bounds how many descendants 'agent stop' looks up before it
// asks: the question needs a count, not a census.
const maxStopTree = 1000

// runAgentStop stops agent id after saying, and on a terminal asking,
// what stops with it when it has children.
func runAgentStop(cmd *cobra.Command, f *liveFlags, id, reason string, dryRun, yes bool) error {
	var tree []string // id's descendants, depth first
	if dryRun || !yes {
		var err error
		tree, err = descendants(cmd, f, id)
		// A missing agent has nothing to ask about: the stop itself
		// answers, forbidden when the role may not stop agents at all.
		if err != nil && (dryRun || bus.ErrorType(err) != bus.ReasonNotFound) {
			return err
		}
	}
	if dryRun {
		if f.json {
			return writeJSON(cmd.OutOrStdout(), map[string]any{"id": id, "dry_run": true, "children": append([]string{}, tree...)})
		}
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "would stop %s\n", id)
		for _, c := range tree {
			fmt.Fprintf(out, "would stop %s (a descendant, unless its on_parent_death is continue or emit_orphan)\n", c)
		}
		return nil
	}
	if len(tree) > 0 {
		shown := tree[:min(len(tree), 5)]
		more := ""
		if len(tree) > len(shown) {
			more = ", …"
		}
		question := fmt.Sprintf("stop %s and its %d children (%s%s)", id, len(tree), strings.Join(shown, ", "), more)
		if err := confirm(cmd, yes, question); err != nil {
			return err
		}
	}
	reply, err := agentRequest(cmd, f, "stop", map[string]string{"id": id, "reason": reason})
	if err != nil {
		return err
	}
	return printAgentReply(cmd, f.json, "stop", reply)
}

// descendants returns the ids of id's children, theirs and so on, as the
// node's state replies name them (at most maxStopTree).
func descendants(cmd *cobra.Command, f *liveFlags, id string) ([]string, error) {
	var out []string
	queue := []string{id}
	for len(queue) > 0 && len(out) < maxStopTree {
		cur := queue[0]
		queue = queue[1:]
		reply, err := agentRequest(cmd, f, "state", map[string]string{"id": cur})
		if err != nil {
			if cur != id {
				continue // a child that stopped meanwhile
			}
			return nil, relabel(err, "agent state", "agent stop")
		}
		var info runtime.Info
		if err := json.Unmarshal(reply, &info); err != nil {
			return nil, fmt.Errorf("agent state %s: reply %.200s: %w", cur, reply, err)
		}
		kids := make([]string, 0, len(info.Children))
		for _, k := range info.Children {
			kids = append(kids, k)
		}
		slices.Sort(kids)
		out = append(out, kids...)
		queue = append(queue, kids...)
	}
	return out, nil
}

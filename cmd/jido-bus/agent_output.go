package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents/runtime"
)

// The JSON each agent command prints (-o json) is the node's reply without
// its "ok" member; these are the shapes, as each command's help says them.
const (
	agentInfoShape = `the agent as one object: {"id","type","stream","status","reason"?,
"state":{…},"version","queue_length","parent"?:{"id","tag"},"children"?:{tag:id},
"error_count","restarts"?,"last_signal"?}.`
	agentStopShape = `{"id":"<agent id>"}.`
	agentCallShape = `{"state":{…},"version":N,"duplicate"?:true}: the agent's state and
version after the signal's commit.`
	agentCastShape = `{"id":"<signal id>"}: the id the signal was sent with.`
	agentListShape = `{"agents":[<agent>…],"next":"<cursor>"|null}, each agent as
'agent state -o json' prints it; next continues with --after.`
)

// printAgentReply prints the reply of agent <verb>: the reply as JSON
// without "ok", or as text for a person.
func printAgentReply(cmd *cobra.Command, asJSON bool, verb string, reply json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(reply, &m); err != nil {
		return fmt.Errorf("agent %s: reply %.200s: %w", verb, reply, err)
	}
	delete(m, "ok")
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, m)
	}
	switch verb {
	case "start", "state", "await":
		var info runtime.Info
		if err := json.Unmarshal(reply, &info); err != nil {
			return fmt.Errorf("agent %s: reply %.200s: %w", verb, reply, err)
		}
		return writeAgentInfo(out, info)
	case "stop":
		var r struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(reply, &r)
		_, err := fmt.Fprintf(out, "stopped %s\n", r.ID)
		return err
	case "call":
		var r runtime.Reply
		if err := json.Unmarshal(reply, &r); err != nil {
			return fmt.Errorf("agent call: reply %.200s: %w", reply, err)
		}
		dup := ""
		if r.Duplicate {
			dup = " (a duplicate: decided before, nothing decided again)"
		}
		_, err := fmt.Fprintf(out, "version: %d%s\nstate:   %s\n", r.Version, dup, compactJSON(r.State))
		return err
	case "cast":
		var r struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(reply, &r)
		_, err := fmt.Fprintf(out, "sent signal %s\n", r.ID)
		return err
	}
	return writeJSON(out, m)
}

// writeAgentInfo prints an agent as "name: value" lines, its state as one
// line of JSON.
func writeAgentInfo(w io.Writer, a runtime.Info) error {
	t := newTable(w, "ID:", a.ID)
	t.row("TYPE:", a.Type)
	t.row("STATUS:", strings.TrimSpace(a.Status+" "+a.Reason))
	t.row("VERSION:", a.Version)
	t.row("QUEUE:", a.QueueLength)
	t.row("ERRORS:", a.ErrorCount)
	if a.Restarts > 0 {
		t.row("RESTARTS:", a.Restarts)
	}
	if a.Parent != nil {
		t.row("PARENT:", a.Parent.ID)
	}
	if len(a.Children) > 0 {
		tags := make([]string, 0, len(a.Children))
		for tag := range a.Children {
			tags = append(tags, tag)
		}
		slices.Sort(tags)
		kids := make([]string, len(tags))
		for i, tag := range tags {
			kids[i] = tag + "=" + a.Children[tag]
		}
		t.row("CHILDREN:", strings.Join(kids, " "))
	}
	if a.LastSignal != "" {
		t.row("LAST SIGNAL:", a.LastSignal)
	}
	t.row("STREAM:", a.Stream)
	t.row("STATE:", compactJSON(a.State))
	return t.flush()
}

// compactJSON is doc on one line (as it came when it is not JSON).
func compactJSON(doc json.RawMessage) string {
	if len(doc) == 0 {
		return "null"
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return string(doc)
	}
	return string(b)
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// convCompactBody is what conv compact sends (jido.api.conv.compact).
type convCompactBody struct {
	Conv   string `json:"conv"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// newConvCompactCmd is conv compact: compact a conversation now.
func newConvCompactCmd() *cobra.Command {
	var (
		f      liveFlags
		reason string
		wait   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "compact CONV",
		Short: "Compact a conversation's context now: the model summarises its older messages",
		Long: `Compact appends conversation.compact to CONV (<project-id>/<conversation-id>)
through a running node (jido.api.conv.compact): between turns, the
conversation's model is asked for a summary of its older messages, and
conversation.compacted records it. From then on every LLM call of the
conversation sends the system prompt, the first user message (the task),
the summary, then the recent messages (the last turn at least) — the
llm_context view shows it, the timeline shows "compacted: N messages →
summary (T tokens)".

A conversation compacts on its own when its context reaches 80 % of its
model's window (the node operator's: serve --provider …,window=MODEL:TOKENS
or --context-window); conv compact does it now. A conversation in a turn
is refused (conflict): compact it when the turn has ended, or cancel the
turn. Compact waits for the outcome (--wait 0: only for the request's
commit) and fails when the compaction does (nothing to compact: the
context is the task and the last turn; the model's error). The summary is
in the log, so log replay --verify re-decides the conversation without a
model.`,
		Example: `  jido-bus conv compact demo/c1
  jido-bus conv compact demo/c1 --reason "before the refactor"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := conversation.CheckKey(args[0]); err != nil {
				return err
			}
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			client := convapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout}
			// The compactions asked before this one: its outcome is the
			// first after the next one the timeline shows.
			asked := 0
			if tl, err := timelineOf(cmd.Context(), client, args[0]); err == nil {
				asked = countKind(tl.Items, views.ItemCompact)
			}
			reply, err := askControl(cmd.Context(), f.requester(nc, subjects), subjects, convapi.VerbCompact, args[0], convCompactBody{Conv: args[0], Reason: reason, By: f.cliUser()})
			if err != nil {
				return err
			}
			if wait <= 0 {
				return printControl(cmd, &f, reply, "compaction asked for")
			}
			it, err := awaitCompaction(cmd.Context(), client, reply.Conv, asked, wait)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), it)
			}
			if it.Error != nil {
				return fmt.Errorf("conv compact %s: not compacted: %s: %s", args[0], it.Error.Type, it.Error.Message)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "compacted %s: %s\n", args[0], it.Text)
			return err
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the event")
	cmd.Flags().DurationVar(&wait, "wait", 2*time.Minute, "how long to wait for the summary (0: return once the request is committed)")
	documentJSON(cmd, `the timeline item of the outcome: {"seq","kind":"compacted","text":"N messages → summary (T tokens; B before): …"}
or {"seq","kind":"compaction_failed","error":{"type","message"}}; with --wait 0
{"id":"<the conversation.compact event's id>","conv","version":N}.`)
	return cmd
}

// timelineOf reads conv's timeline.
func timelineOf(ctx context.Context, client convapi.Client, conv string) (views.Timeline, error) {
	var tl views.Timeline
	show, err := client.Show(ctx, convapi.ShowRequest{Conv: conv, View: views.ViewTimeline})
	if err != nil {
		return tl, err
	}
	if err := json.Unmarshal(show.State, &tl); err != nil {
		return tl, fmt.Errorf("timeline of %s: %w", conv, err)
	}
	return tl, nil
}

func countKind(items []views.TimelineItem, kind string) int {
	n := 0
	for _, it := range items {
		if it.Kind == kind {
			n++
		}
	}
	return n
}

// awaitCompaction polls conv's timeline for the outcome of the
// compaction asked after the asked others: the first compacted or
// compaction_failed item after the next compact item. (The node
// refuses a compaction while one is in flight, so outcomes follow their
// requests in order.)
func awaitCompaction(ctx context.Context, client convapi.Client, conv string, asked int, wait time.Duration) (views.TimelineItem, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		tl, err := timelineOf(ctx, client, conv)
		if err != nil && !transient(err) && !errors.Is(err, context.DeadlineExceeded) {
			return views.TimelineItem{}, err
		}
		seen := 0
		for _, it := range tl.Items {
			switch {
			case it.Kind == views.ItemCompact:
				seen++
			case seen > asked && (it.Kind == views.ItemCompacted || it.Kind == views.ItemCompactFailed):
				return it, nil
			}
		}
		select {
		case <-ctx.Done():
			return views.TimelineItem{}, bus.Errorf(bus.ReasonUnavailable, "conversation %s: no summary within %s; the compaction goes on — jido-bus conv show %s shows its outcome", conv, wait, conv)
		case <-tick.C:
		}
	}
}

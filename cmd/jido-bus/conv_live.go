package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections/conversation"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
)

// liveFlags are the flags of the conv commands that need a running node.
type liveFlags struct {
	natsURL string
	prefix  string
	timeout time.Duration
	json    bool
}

func (f *liveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.natsURL, "nats-url", nats.DefaultURL, "NATS server of the running jido-bus node")
	cmd.Flags().StringVar(&f.prefix, "prefix", bus.DefaultPrefix, "subject prefix the node serves under")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "how long to wait for each answer from the node")
	addOutputFlags(cmd, &f.json)
}

func (f *liveFlags) connect() (*nats.Conn, bus.Subjects, error) {
	subjects, err := bus.NewSubjects(f.prefix)
	if err != nil {
		return nil, subjects, err
	}
	nc, err := nats.Connect(f.natsURL, nats.Timeout(f.timeout), nats.Name("jido-bus cli"))
	if err != nil {
		return nil, subjects, fmt.Errorf("no jido-bus node answers at %s (start one with 'jido-bus serve', or set --nats-url): %w", f.natsURL, err)
	}
	return nc, subjects, nil
}

func newConvSendCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "send CONV TEXT",
		Short: "Append a user message to a conversation (starting it if new)",
		Long: `Send appends conversation.user.message with TEXT to CONV
(<project-id>/<conversation-id>) through a running node; the conversation's
agent is started, with its conversation.started event, when it is new.

CONV is the id of the conversation's agent, so it takes exactly the ids
'agent start --id' takes, of two segments: each of letters, digits, '_'
and '-', starting with a letter or digit, 256 bytes in all at most.`,
		Example: `  jido-bus conv send demo/c1 "What does this function do?"`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := conversation.CheckKey(args[0]); err != nil {
				return err
			}
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			body, _ := json.Marshal(map[string]string{"conv": args[0], "text": args[1]})
			msg, err := nc.Request(subjects.API("conv", "send"), body, f.timeout)
			if err != nil {
				return fmt.Errorf("conv send %s: %w", args[0], err)
			}
			var reply struct {
				bus.ReplyStatus
				ID      string `json:"id"`
				Version uint64 `json:"version"`
			}
			if err := json.Unmarshal(msg.Data, &reply); err != nil {
				return fmt.Errorf("conv send %s: reply %q: %w", args[0], msg.Data, err)
			}
			if err := reply.Err(); err != nil {
				return fmt.Errorf("conv send %s: %w", args[0], err)
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"id": reply.ID, "version": reply.Version})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "sent %s to %s\n", reply.ID, args[0])
			return err
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"id":"<the message's signal id>","version":N}.`)
	return cmd
}

func newConvFollowCmd() *cobra.Command {
	var (
		f     liveFlags
		every time.Duration
	)
	cmd := &cobra.Command{
		Use:   "follow CONV",
		Short: "Print a conversation's timeline as it grows, assistant deltas included",
		Long: `Follow prints CONV's timeline (<project-id>/<conversation-id>) and then
each new item as it is committed, and the assistant's deltas (transient
conversation.assistant.delta events, never logged) as they stream. It runs
until interrupted.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := args[0]
			if err := conversation.CheckKey(key); err != nil {
				return err
			}
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			out := cmd.OutOrStdout()
			deltas, err := nc.Subscribe(subjects.Emit(key, convevent.AssistantDelta), func(m *nats.Msg) {
				var d convevent.Data
				if json.Unmarshal(m.Data, &d) == nil {
					fmt.Fprint(out, d.Text)
				}
			})
			if err != nil {
				return err
			}
			defer func() { _ = deltas.Unsubscribe() }()
			client := projectionapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout}
			shown := 0
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				reply, err := client.ConvShow(cmd.Context(), projectionapi.ConvShowRequest{Conv: key, View: conversation.ViewTimeline})
				if err == nil {
					var tl conversation.Timeline
					if err := json.Unmarshal(reply.State, &tl); err != nil {
						return fmt.Errorf("timeline of %s: %w", key, err)
					}
					for ; shown < len(tl.Items); shown++ {
						printItem(out, tl.Items[shown], f.json)
					}
				} else if bus.ErrorType(err) != bus.ReasonNotFound {
					return err
				}
				select {
				case <-cmd.Context().Done():
					return nil
				case <-tick.C:
				}
			}
		},
	}
	f.register(cmd)
	documentJSON(cmd, `one JSON object per line as items come: each timeline item
{"seq","kind","text"?,"tool"?,"error"?,…}, an item printed again when it
changes (a tool call completing), and each assistant delta as
{"kind":"delta","text":"…"}.`)
	cmd.Flags().DurationVar(&every, "every", 250*time.Millisecond, "how often to look for new timeline items")
	return cmd
}

// printItem prints one timeline item: a JSON line, or "seq kind text".
func printItem(w io.Writer, it conversation.TimelineItem, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(it)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	text := it.Text
	switch {
	case it.Tool != nil:
		b, _ := json.Marshal(it.Tool)
		text = string(b)
	case it.Error != nil:
		text = it.Error.Type + ": " + it.Error.Message
	}
	fmt.Fprintf(w, "%4d  %-20s %s\n", it.Seq, it.Kind, text)
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// liveFlags are the flags of the commands that need a running node.
type liveFlags struct {
	connFlags
	json bool
	// follower, when set, makes the connection reconnect for ever,
	// telling it (stderr) when the node is lost and back.
	follower io.Writer
	// followerName is the command a follower's messages name.
	followerName string
}

func (f *liveFlags) register(cmd *cobra.Command) {
	f.connFlags.register(cmd)
	addOutputFlags(cmd, &f.json)
}

// connect is connFlags.connect, reconnecting for ever for a follower.
func (f *liveFlags) connect() (*nats.Conn, bus.Subjects, error) {
	if f.follower != nil {
		name := f.followerName
		if name == "" {
			name = "cli"
		}
		return f.connFlags.connect(f.followerOptions(f.follower, name)...)
	}
	return f.connFlags.connect()
}

func newConvSendCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "send CONV TEXT",
		Short: "Append a user message to a conversation (starting it in its project if new)",
		Long: `Send appends conversation.user.message with TEXT to CONV
(<project-id>/<conversation-id>) through a running node. A new CONV is
started in its open project, as conv start does; with no project of that
id open it is refused (exit 3): ids under a project's id are the
project's. A conversation your own service drives (its model answers
written from outside) is started by an operator, under an id no project
uses: agent start conversation --id CONV.

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
			data, err := f.requester(nc, subjects).Request(cmd.Context(), subjects.API("conv", "send"), map[string]string{"conv": args[0], "text": args[1]})
			if err != nil {
				return fmt.Errorf("conv send %s: %w", args[0], err)
			}
			var reply struct {
				ID      string `json:"id"`
				Version uint64 `json:"version"`
			}
			if err := json.Unmarshal(data, &reply); err != nil {
				return fmt.Errorf("conv send %s: reply %q: %w", args[0], data, err)
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
conversation.assistant.delta events, never logged) as they stream, ending
the streamed text with a newline when the message it belongs to is
committed. A tool call's line is printed again when the call completes
(or fails), with its outcome. It runs until interrupted, and outlives the
node's restarts as 'nats sub' does, saying so on stderr; a node that does
not answer when it starts is an error (exit 4). A conversation that does
not exist yet is waited for, saying so once on stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvFollow(cmd, &f, args[0], every)
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

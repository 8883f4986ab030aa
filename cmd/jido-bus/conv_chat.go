package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
)

func newConvChatCmd() *cobra.Command {
	var (
		f    liveFlags
		opts convStartOptions
		last bool
	)
	cmd := &cobra.Command{
		Use:   "chat PROJECT [CONV]",
		Short: "Talk to a project's assistant in the terminal",
		Long: `Chat is an interactive session with a conversation of the open project
PROJECT: a new one, or the conversation CONV (its id, or
<project>/<conversation>), or with --last the project's conversation
updated last. A conversation taken up again shows its history first. Each
line read is sent as a user message (conv send); the answer streams as it
comes, tool calls and their results are shown on a line each
(→ read_file {"path":"a.go"}, ← ok 1.2 KB), and a tool call the project's
policy asks about is asked inline: y approves, a approves the tool for the
rest of the conversation, anything else denies. The next line is read
once the turn has ended.

Ctrl-D leaves. Ctrl-C during a turn cancels it (conv cancel); a second
Ctrl-C, or one at the prompt, leaves with exit code 130. Lines may come
from a pipe or a file as well as a terminal: the session then ends after
the last line's turn. The session outlives a restart of the node: it says
the node was lost and is back, then shows what happened meanwhile (an
answer cut by the restart, and the answer asked again) without showing
anything twice.

--provider, --model, --system, --max-tokens, --max-cost and --mode apply to the
conversation it starts, as for conv start. A message sent once the
conversation's budget is spent gets conversation.budget.exceeded, printed
with its reason, and no answer.`,
		Example: `  jido-bus conv chat demo
  jido-bus conv chat demo --last          # take up the conversation updated last
  printf 'what does main.go do?\n' | jido-bus conv chat demo c1`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.json {
				return errors.New("conv chat talks with a person and prints no JSON: for a program, use conv send, and conv follow -o json to read the answers")
			}
			key := ""
			if len(args) == 2 {
				if last {
					return fmt.Errorf("give CONV or --last, not both: %s is a conversation already", args[1])
				}
				var err error
				if key, err = chatKey(args[0], args[1]); err != nil {
					return err
				}
			}
			if key != "" || last {
				if cmd.Flags().Changed("mode") {
					// Taken up silently in its own mode, a conversation
					// chat was asked to hold to plan would write.
					return fmt.Errorf("--mode applies to a conversation conv chat starts, not one it takes up (CONV, --last): set that one's with 'jido-bus conv mode %s/<conversation> MODE', or drop CONV and --last to start one", args[0])
				}
				for _, name := range []string{"provider", "model", "system", "max-tokens", "max-cost"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s applies to a conversation conv chat starts, not one it takes up (CONV, --last): drop CONV and --last, or start it with 'jido-bus conv start %s --id ID --%s …'", name, args[0], name)
					}
				}
			}
			news := make(chan connNews, 16)
			nc, subjects, err := f.connFlags.connect(chatConnOptions(&f.connFlags, cmd.ErrOrStderr(), news)...)
			if err != nil {
				return err
			}
			defer nc.Close()
			// The first Ctrl-C cancels the command's context (main); the
			// session answers Ctrl-C itself, so its requests go on.
			ctx := context.WithoutCancel(cmd.Context())
			r := f.requester(nc, subjects)
			info := cmd.ErrOrStderr()
			switch {
			case key != "":
				fmt.Fprintf(info, "conversation %s; Ctrl-D leaves, Ctrl-C cancels a turn\n", key)
			case last:
				if key, err = lastConversation(ctx, r, subjects, args[0]); err != nil {
					return err
				}
				if key != "" {
					fmt.Fprintf(info, "conversation %s, updated last; Ctrl-D leaves, Ctrl-C cancels a turn\n", key)
					break
				}
				fmt.Fprintf(info, "project %s has no conversation yet: starting one\n", args[0])
				fallthrough
			default:
				earlier, _ := lastConversation(ctx, r, subjects, args[0])
				started, err := startConversation(ctx, r, subjects, opts.body(args[0]))
				if err != nil {
					return err
				}
				key = started.ID
				_, id, _ := strings.Cut(key, "/")
				fmt.Fprintf(info, "conversation %s; Ctrl-D leaves, Ctrl-C cancels a turn; 'jido-bus conv chat %s %s' comes back to it", key, args[0], id)
				if earlier != "" {
					fmt.Fprintf(info, " (--last: the one updated last)")
				}
				fmt.Fprintln(info)
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt)
			defer signal.Stop(sigs)
			s := &chatSession{r: r, subjects: subjects, key: key, by: f.cliUser(), conn: news,
				out: cmd.OutOrStdout(), info: info, interrupts: sigs, prompt: readsTerminal(cmd.InOrStdin())}
			return s.run(ctx, nc, cmd.InOrStdin())
		},
	}
	f.register(cmd)
	// A chat prints for a person only: the output flags stay parsed (to
	// refuse them with what to use instead) but are not offered.
	_ = cmd.Flags().MarkHidden("output")
	_ = cmd.Flags().MarkHidden("json")
	opts.register(cmd, false)
	cmd.Flags().BoolVar(&last, "last", false, "take up the project's conversation updated last (a new one when it has none)")
	return cmd
}

// chatConnOptions make the session's connection reconnect for ever, as a
// follower's does, and tell the session (news) when the node is lost and
// back: it prints that itself, between its own lines, and reads what it
// missed.
func chatConnOptions(f *connFlags, stderr io.Writer, news chan<- connNews) []nats.Option {
	opts := f.followerOptions(stderr, "conv chat")
	tell := func(n connNews) {
		select {
		case news <- n:
		default: // a session far behind its news needs only the latest
		}
	}
	return append(opts,
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return
			}
			reason := ""
			if err != nil {
				reason = " (" + err.Error() + ")"
			}
			tell(connNews{say: fmt.Sprintf("(lost the node at %s%s; reconnecting…)", f.url, reason)})
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			if nc.IsClosed() {
				return
			}
			tell(connNews{back: true, say: fmt.Sprintf("(the node at %s is back)", redactURL(nc.ConnectedUrl()))})
		}))
}

// lastConversation is the key of project's conversation updated last, or
// "" when it has none.
func lastConversation(ctx context.Context, r requester, subjects bus.Subjects, project string) (string, error) {
	var (
		best convapi.Summary
		req  = convapi.ListRequest{Project: project}
	)
	for {
		data, err := r.Request(ctx, subjects.API(convapi.Area, convapi.VerbList), req)
		if err != nil {
			return "", fmt.Errorf("conv ls %s: %w", project, err)
		}
		var page convapi.ListReply
		if err := json.Unmarshal(data, &page); err != nil {
			return "", fmt.Errorf("conv ls %s: %w", project, err)
		}
		for _, c := range page.Conversations {
			if best.Conv == "" || c.UpdatedAt.After(best.UpdatedAt) {
				best = c
			}
		}
		if page.Next == "" {
			return best.Conv, nil
		}
		req.After = page.Next
	}
}

// chatKey is the conversation key of chat's PROJECT and CONV arguments.
func chatKey(project, conv string) (string, error) {
	key := project + "/" + conv
	if strings.Contains(conv, "/") {
		if !strings.HasPrefix(conv, project+"/") {
			return "", fmt.Errorf("CONV %q is not a conversation of project %s: give its id, or %s/<id>", conv, project, project)
		}
		key = conv
	}
	return key, conversation.CheckKey(key)
}

// readsTerminal reports whether in is a terminal (a person typing, who
// wants a prompt).
func readsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

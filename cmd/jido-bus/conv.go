package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// newConvCmd is `jido-bus conv`: list, show and fork conversations, read
// from their projections.
func newConvCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conv",
		Short: "Start, talk to, steer, list, show and fork conversations",
		Long: `A conversation is the log stream conversation/<project-id>/<conversation-id>;
CONV names it as <project-id>/<conversation-id>. Its read models are
projections: timeline (what a person sees), llm_context (the messages of
the next LLM call), status (what it waits for) and diagnostics (errors,
retries, tokens, timings).

start, send, chat, follow, cancel, approve, deny and fork talk to a
running node; ls and show read as follows.

` + sourceHelp,
	}
	cmd.AddCommand(newConvLsCmd(), newConvShowCmd(), newConvForkCmd(), newConvSendCmd(), newConvFollowCmd(),
		newConvStartCmd(), newConvChatCmd(), newConvCancelCmd(), newConvDecideCmd("approve"), newConvDecideCmd("deny"), newConvModeCmd(), newConvCompactCmd(),
		newConvRewindCmd(), newConvStopCmd())
	return cmd
}

func newConvLsCmd() *cobra.Command {
	var (
		f       logFlags
		project string
	)
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List conversations with their state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withProjections(cmd, true, func(ctx context.Context, b *openedProjections) error {
				var all []convapi.Summary
				req := convapi.ListRequest{Project: project}
				for {
					page, err := b.conv.List(ctx, req)
					if err != nil {
						return err
					}
					all = append(all, page.Conversations...)
					if page.Next == "" {
						break
					}
					req.After = page.Next
				}
				if f.json {
					return writeList(cmd.OutOrStdout(), "conversations", all, nil)
				}
				tw := newTable(cmd.OutOrStdout(), "CONV", "STATE", "PENDING", "TOKENS IN", "TOKENS OUT", "COST USD", "LAST SEQ", "UPDATED", "FORKED FROM", "PARENT", "BRANCH")
				for _, c := range all {
					tw.row(c.Conv, c.State, c.PendingTools, c.TokensIn, c.TokensOut, strconv.FormatFloat(c.CostUSD, 'f', -1, 64), c.LastSeq, c.UpdatedAt.Format(time.RFC3339), c.Parent, c.DelegatedBy, c.Branch)
				}
				return tw.flush()
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "only the conversations of this project")
	f.register(cmd)
	documentJSON(cmd, `{"conversations":[{"conv","state","pending_tools","last_seq",
"updated_at","parent"?,"delegated_by"?,"tokens_in","tokens_out","cost_usd"}…],"next":null} (every conversation: the pages are
joined).`)
	return cmd
}

func newConvShowCmd() *cobra.Command {
	var (
		f    logFlags
		view string
		at   uint64
	)
	cmd := &cobra.Command{
		Use:   "show CONV",
		Short: "Show a read model of a conversation",
		Long: `Show prints one read model of CONV (<project-id>/<conversation-id>):
--view timeline (default), llm_context, status or diagnostics. With --at SEQ
it shows the model as it was after the conversation's entry SEQ: a stream
sequence, the number this command prints beside each item (and log show
in its SEQ column), which conv fork --at and log replay --to take too.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// --at folds afresh from the log: nothing to catch up first.
			return f.withProjections(cmd, at == 0, func(ctx context.Context, b *openedProjections) error {
				reply, err := b.conv.Show(ctx, convapi.ShowRequest{Conv: args[0], View: view, Seq: at})
				if err != nil {
					return err
				}
				if f.json {
					return writeJSONLine(cmd, reply)
				}
				return views.Render(cmd.OutOrStdout(), reply.View, reply.State)
			})
		},
	}
	cmd.Flags().StringVar(&view, "view", views.ViewTimeline, "timeline, llm_context, status or diagnostics")
	cmd.Flags().Uint64Var(&at, "at", 0, "show the model as it was after the entry at this stream `SEQ` (the number beside each timeline item)")
	f.register(cmd)
	documentJSON(cmd, `{"conv","view","position":N,"state":{the read model}}: position
is the log's global sequence the model includes (log show's GLOBAL
column), not a stream sequence.`)
	return cmd
}

func newConvForkCmd() *cobra.Command {
	var (
		f  logFlags
		at uint64
		as string
	)
	cmd := &cobra.Command{
		Use:   "fork CONV --at SEQ",
		Short: "Start a new conversation whose history is CONV up to SEQ",
		Long: `Fork starts a new conversation (--as, default <conv>-fork-<seq>) whose
history is CONV's events up to its stream sequence SEQ (the number conv
show prints beside each item, as conv show --at and log replay --to
take it), the entry at SEQ included. Tool and LLM calls
unfinished at SEQ are closed as interrupted in the fork; CONV is untouched.
The fork is a live conversation: the node starts its agent and hands it
the history, so 'conv send' continues it. Forking needs a running node.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if at == 0 {
				return fmt.Errorf("conv fork needs --at SEQ")
			}
			// Only a node forks (it starts the fork's agent): nothing to fold.
			return f.withProjections(cmd, false, func(ctx context.Context, b *openedProjections) error {
				reply, err := b.conv.Fork(ctx, convapi.ForkRequest{Conv: args[0], Seq: at, As: as})
				if err != nil {
					return err
				}
				if f.json {
					return writeJSONLine(cmd, reply)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "forked %s at seq %d into %s (%d events)\n", args[0], at, reply.Conv, reply.Events)
				return nil
			})
		},
	}
	cmd.Flags().Uint64Var(&at, "at", 0, "the stream `SEQ` of CONV the fork's history ends at, included (the number beside each item of conv show)")
	cmd.Flags().StringVar(&as, "as", "", "the new conversation, <project-id>/<conversation-id>")
	f.register(cmd)
	documentJSON(cmd, `{"conv":"<the fork>","stream","events":N,"version":N}.`)
	return cmd
}

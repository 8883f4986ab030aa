package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
)

// newConvStopCmd is conv stop: end a conversation, keeping or removing
// its git worktree.
func newConvStopCmd() *cobra.Command {
	var (
		f            liveFlags
		reason       string
		keep, remove bool
	)
	cmd := &cobra.Command{
		Use:   "stop CONV",
		Short: "Stop a conversation for good, keeping or removing its worktree",
		Long: `Stop stops CONV (<project-id>/<conversation-id>) through a running node
(jido.api.conv.stop): its agent stops, its stream keeps its history, and
it takes no message again (fork it to go on).

A conversation started with --worktree keeps its git worktree and branch
unless --remove-worktree is given. Removing refuses a worktree holding
changes not committed (it is kept, and the reply says so); the branch is
deleted with it only when the project's HEAD has all its commits, and
kept (the reply says how many commits it has) otherwise.`,
		Example: `  jido-bus conv stop demo/c1
  jido-bus conv stop demo/fix --remove-worktree`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := conversation.CheckKey(args[0]); err != nil {
				return err
			}
			if keep && remove {
				return fmt.Errorf("conv stop %s: give --keep-worktree or --remove-worktree, not both", args[0])
			}
			project, conv, _ := strings.Cut(args[0], "/")
			body := convapi.StopRequest{Project: project, Conversation: conv, Reason: reason}
			if remove {
				body.Worktree = convapi.WorktreeRemove
			} else if keep {
				body.Worktree = convapi.WorktreeKeep
			}
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			data, err := f.requester(nc, subjects).Request(cmd.Context(), subjects.API(convapi.Area, convapi.VerbStop), body)
			if err != nil {
				return fmt.Errorf("conv stop %s: %w", args[0], err)
			}
			var reply convapi.StopReply
			if err := json.Unmarshal(data, &reply); err != nil {
				return fmt.Errorf("conv stop %s: reply %q: %w", args[0], data, err)
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), reply)
			}
			out := cmd.OutOrStdout()
			if _, err := fmt.Fprintf(out, "stopped %s\n", args[0]); err != nil {
				return err
			}
			if wt := reply.Worktree; wt != nil {
				_, err = fmt.Fprintln(out, worktreeEndText(wt))
			}
			return err
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the project's stream")
	cmd.Flags().BoolVar(&keep, "keep-worktree", false, "keep the conversation's git worktree and branch (the default)")
	cmd.Flags().BoolVar(&remove, "remove-worktree", false, "remove the conversation's git worktree (refused while it holds changes not committed); its branch goes too unless it has commits the project's HEAD lacks")
	documentJSON(cmd, `{"project","conversation","worktree":{"branch","path","removed","kept","branch_kept","commits"}} (worktree: when it had one).`)
	return cmd
}

// worktreeEndText says what became of a stopped conversation's worktree.
func worktreeEndText(wt *conversation.WorktreeEnd) string {
	var b strings.Builder
	switch {
	case wt.Removed:
		fmt.Fprintf(&b, "worktree %s removed", wt.Path)
	case wt.Kept != "":
		fmt.Fprintf(&b, "worktree %s kept: %s", wt.Path, wt.Kept)
	default:
		fmt.Fprintf(&b, "worktree %s kept", wt.Path)
	}
	switch {
	case !wt.BranchKept:
		fmt.Fprintf(&b, "; branch %s deleted (no commit of its own)", wt.Branch)
	case wt.Commits > 0:
		fmt.Fprintf(&b, "; branch %s kept: it has %d commit(s) the project's HEAD does not (merge it, or git branch -D %s)", wt.Branch, wt.Commits, wt.Branch)
	default:
		fmt.Fprintf(&b, "; branch %s kept", wt.Branch)
	}
	return b.String()
}

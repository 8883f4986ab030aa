package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
)

// newConvRewindCmd is conv rewind: put back the files a conversation
// changed after a step and fork it there.
func newConvRewindCmd() *cobra.Command {
	var (
		f   liveFlags
		req convapi.RewindRequest
	)
	cmd := &cobra.Command{
		Use:   "rewind CONV --to SEQ",
		Short: "Put back the files CONV changed after SEQ and fork it there",
		Long: `Rewind puts back the files CONV's tools (write_file, edit_file, and the
steps of its workflows) changed after its stream sequence SEQ — the
number conv show prints beside each item, as conv fork --at takes it —
each to its content before the first of those changes, the latest
changed first; a file those changes created is removed. Then it forks
CONV at SEQ (--as, default <conv>-fork-<seq>), as conv fork does: the
fork continues from there, CONV stays as it was, readable.

The contents before each change are kept in the node's data dir
(checkpoints, bounded by serve --checkpoint-max-size) until the
conversation is stopped. What run_command and command tools did is not
checkpointed file by file: rewind lists those calls and does not undo
them.

A file whose content now is not what the conversation's last change
left was changed outside the conversation: rewind names it and does
nothing, unless --force. --dry-run lists what it would put back.
Rewinding needs a running node (jido.api.conv.rewind, an operator's).`,
		Example: `  jido-bus conv rewind demo/c1 --to 4 --dry-run
  jido-bus conv rewind demo/c1 --to 4
  jido-bus conv rewind demo/c1 --to 4 --as demo/retry --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.To == 0 {
				return fmt.Errorf("conv rewind needs --to SEQ (the number conv show prints beside each item)")
			}
			if err := conversation.CheckKey(args[0]); err != nil {
				return err
			}
			req.Conv = args[0]
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			data, err := f.requester(nc, subjects).Request(cmd.Context(), subjects.API(convapi.Area, convapi.VerbRewind), req)
			if err != nil {
				return fmt.Errorf("conv rewind %s: %w", req.Conv, err)
			}
			var reply convapi.RewindReply
			if err := json.Unmarshal(data, &reply); err != nil {
				return fmt.Errorf("conv rewind %s: reply %q: %w", req.Conv, data, err)
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), reply)
			}
			return printRewind(cmd, reply)
		},
	}
	f.register(cmd)
	cmd.Flags().Uint64Var(&req.To, "to", 0, "the stream `SEQ` of CONV to go back to, included (the number beside each item of conv show)")
	cmd.Flags().StringVar(&req.As, "as", "", "the fork, <project-id>/<conversation-id> (default <conv>-fork-<seq>)")
	cmd.Flags().BoolVar(&req.Force, "force", false, "put back files changed outside the conversation since its last change of them")
	cmd.Flags().BoolVar(&req.DryRun, "dry-run", false, "list what would be put back and do nothing")
	documentJSON(cmd, `{"conv","fork","to":N,"dry_run":bool,"files":[{"path","action":"restore|remove","seq":N,"changed_outside":bool,"done":bool}],
"unchecked":[{"seq":N,"call_id","tool"}],"events":N,"version":N}.`)
	return cmd
}

func printRewind(cmd *cobra.Command, r convapi.RewindReply) error {
	w := cmd.OutOrStdout()
	verb := "put back"
	if r.DryRun {
		verb = "would put back"
	}
	for _, f := range r.Files {
		note := ""
		if f.Changed {
			note = " (changed outside the conversation)"
		}
		fmt.Fprintf(w, "%s %s: %s (last changed at seq %d)%s\n", verb, f.Path, f.Action, f.Seq, note)
	}
	if len(r.Files) == 0 {
		fmt.Fprintf(w, "no file changed by %s after seq %d\n", r.Conv, r.To)
	}
	for _, u := range r.Unchecked {
		fmt.Fprintf(w, "not undone: %s at seq %d (call %s) ran programs, whose changes are not checkpointed\n", u.Tool, u.Seq, u.CallID)
	}
	if r.DryRun {
		_, err := fmt.Fprintf(w, "dry run: nothing done; %s would fork into %s\n", r.Conv, r.Fork)
		return err
	}
	_, err := fmt.Fprintf(w, "rewound %s to seq %d: forked into %s (%d events)\n", r.Conv, r.To, r.Fork, r.Events)
	return err
}

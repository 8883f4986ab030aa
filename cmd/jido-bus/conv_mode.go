package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/conversation"
)

// convModeBody is what conv mode sends (jido.api.conv.mode).
type convModeBody struct {
	Conv   string `json:"conv"`
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// newConvModeCmd is conv mode: set a conversation's permission mode.
func newConvModeCmd() *cobra.Command {
	var (
		f      liveFlags
		reason string
	)
	cmd := &cobra.Command{
		Use:   "mode CONV plan|ask|auto",
		Short: "Set a conversation's permission mode (plan, ask, auto)",
		Long: `Mode appends conversation.mode to CONV (<project-id>/<conversation-id>)
through a running node (jido.api.conv.mode, an operator's): the
permission mode of the tool calls the conversation starts from then on.

  plan  read-only: a tool that writes files or runs programs is not run
        (conversation.tool.failed plan_mode), approved or not
  ask   ask-before-edit: each call of such a tool waits for a person
        (conv approve / conv deny), as a tool of policy mode ask does
  auto  auto-edit: the project's policy as it is

What counts as writing or running is each tool's own safety declaration
(project tools lists it); a tool that declares nothing counts as both.
A mode is layered on the project's policy and never looser than it: a
tool the policy denies or asks about is denied or asked about in every
mode. The mode is in the log, so log replay re-decides with it.`,
		Example: `  jido-bus conv mode demo/c1 plan
  jido-bus conv mode demo/c1 auto --reason "plan agreed"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := conversation.CheckMode(args[1]); err != nil || args[1] == "" {
				return fmt.Errorf("conv mode %s %q: give plan, ask or auto", args[0], args[1])
			}
			reply, err := f.control(cmd.Context(), "mode", args[0], convModeBody{Conv: args[0], Mode: args[1], Reason: reason, By: f.cliUser()})
			if err != nil {
				return err
			}
			return printControl(cmd, &f, reply, "mode "+args[1]+" for")
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the event")
	documentJSON(cmd, `{"id":"<the conversation.mode event's id>","conv","version":N}.`)
	return cmd
}

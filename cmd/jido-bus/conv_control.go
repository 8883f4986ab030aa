package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// convControlReply is the node's answer to conv.cancel and conv.approve.
type convControlReply struct {
	ID      string `json:"id"`
	Conv    string `json:"conv"`
	Version uint64 `json:"version"`
}

// convApproveBody is the request of jido.api.conv.approve.
type convApproveBody struct {
	Conv     string `json:"conv"`
	CallID   string `json:"call_id"`
	Decision string `json:"decision"`
	Remember string `json:"remember,omitempty"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
}

// convCancelBody is the request of jido.api.conv.cancel.
type convCancelBody struct {
	Conv   string `json:"conv"`
	Reason string `json:"reason,omitempty"`
}

func askControl(ctx context.Context, r requester, subjects bus.Subjects, verb, conv string, body any) (convControlReply, error) {
	var reply convControlReply
	data, err := r.Request(ctx, subjects.API("conv", verb), body)
	if err != nil {
		return reply, fmt.Errorf("conv %s %s: %w", verb, conv, err)
	}
	if err := json.Unmarshal(data, &reply); err != nil {
		return reply, fmt.Errorf("conv %s %s: reply %q: %w", verb, conv, data, err)
	}
	return reply, nil
}

// control checks conv's key, connects, and asks jido.api.conv.<verb>.
func (f *liveFlags) control(ctx context.Context, verb, conv string, body any) (convControlReply, error) {
	if err := conversation.CheckKey(conv); err != nil {
		return convControlReply{}, err
	}
	nc, subjects, err := f.connect()
	if err != nil {
		return convControlReply{}, err
	}
	defer nc.Close()
	return askControl(ctx, f.requester(nc, subjects), subjects, verb, conv, body)
}

// cliUser is who a decision is recorded as taken by: the NATS user the
// CLI connects as, or "cli".
func (f *liveFlags) cliUser() string {
	if s, err := f.resolve(); err == nil && s.user != "" {
		return s.user
	}
	return "cli"
}

func printControl(cmd *cobra.Command, f *liveFlags, reply convControlReply, what string) error {
	if f.json {
		return writeJSON(cmd.OutOrStdout(), reply)
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s, version %d)\n", what, reply.Conv, reply.ID, reply.Version)
	return err
}

func newConvCancelCmd() *cobra.Command {
	var (
		f      liveFlags
		reason string
	)
	cmd := &cobra.Command{
		Use:   "cancel CONV",
		Short: "Stop a conversation's current turn",
		Long: `Cancel appends conversation.cancel to CONV (<project-id>/<conversation-id>)
through a running node: the model's stream is cancelled and running tool
calls are cancelled and recorded conversation.tool.cancelled. The
conversation itself goes on: the next conv send starts a new turn.`,
		Example: `  jido-bus conv cancel demo/c1 --reason "wrong file"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reply, err := f.control(cmd.Context(), "cancel", args[0], convCancelBody{Conv: args[0], Reason: reason})
			if err != nil {
				return err
			}
			return printControl(cmd, &f, reply, "cancelled the turn of")
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the event")
	documentJSON(cmd, `{"id":"<the conversation.cancel event's id>","conv","version":N}.`)
	return cmd
}

// newConvDecideCmd is conv approve (decision "approve") or conv deny.
func newConvDecideCmd(decision string) *cobra.Command {
	var (
		f        liveFlags
		remember bool
		reason   string
	)
	cmd := &cobra.Command{
		Use:  decision + " CONV CALL_ID",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := convApproveBody{Conv: args[0], CallID: args[1], Decision: decision, Reason: reason, By: f.cliUser()}
			if remember {
				body.Remember = "conversation"
			}
			reply, err := f.control(cmd.Context(), "approve", args[0], body)
			if err != nil {
				// Both answers ask jido.api.conv.approve; the error names
				// the command the user typed.
				return relabel(err, "conv approve ", "conv "+decision+" ")
			}
			return printControl(cmd, &f, reply, decision+"d call "+args[1]+" of")
		},
	}
	f.register(cmd)
	if decision == "approve" {
		cmd.Short = "Let a tool call that waits for approval run"
		cmd.Long = `Approve answers the tool call CALL_ID of CONV, which waits for approval
(the project's policy says ask), with conversation.tool.approval
{"decision":"approve"}: the call runs. --remember approves this tool for
the rest of the conversation. A call that is not waiting is refused
(exit 3): conv show CONV lists those that are.`
		cmd.Example = `  jido-bus conv approve demo/c1 call_1 --remember`
		cmd.Flags().BoolVar(&remember, "remember", false, "approve this tool for the rest of the conversation")
	} else {
		cmd.Short = "Refuse a tool call that waits for approval"
		cmd.Long = `Deny answers the tool call CALL_ID of CONV, which waits for approval, with
conversation.tool.approval {"decision":"deny"}: the call is not run, and
the model is told it was denied (with --reason, why). A call that is not
waiting is refused (exit 3): conv show CONV lists those that are.`
		cmd.Example = `  jido-bus conv deny demo/c1 call_1 --reason "do not touch go.mod"`
		cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the event and shown to the model")
	}
	documentJSON(cmd, `{"id":"approval.<call-id>.`+decision+`","conv","version":N}.`)
	return cmd
}

// relabel is err with the prefix its message starts with replaced: the
// type a script reads (errors.As, exit code) is kept.
func relabel(err error, from, to string) error {
	if from == to || !strings.HasPrefix(err.Error(), from) {
		return err
	}
	return &relabelled{err: err, msg: to + strings.TrimPrefix(err.Error(), from)}
}

type relabelled struct {
	err error
	msg string
}

func (r *relabelled) Error() string { return r.msg }
func (r *relabelled) Unwrap() error { return r.err }

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
)

// convLLM is the per-conversation model override of conv start: the
// `llm` member of jido.api.conv.start, recorded in
// conversation.started. Where a key goes and which variable holds it are
// the node operator's (serve --provider), never a conversation's.
type convLLM struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// convStartBody is the request conv start sends; llm and system are left
// out unless given, so a node that does not know them yet still answers.
type convStartBody struct {
	Project      string      `json:"project"`
	Conversation string      `json:"conversation,omitempty"`
	LLM          *convLLM    `json:"llm,omitempty"`
	System       string      `json:"system,omitempty"`
	Budget       *convBudget `json:"budget,omitempty"`
	Mode         string      `json:"mode,omitempty"`
	Worktree     bool        `json:"worktree,omitempty"`
}

// convBudget is conv start's --max-tokens and --max-cost: the `budget`
// member of jido.api.conv.start, what the whole conversation may spend.
type convBudget struct {
	MaxTokens  int64   `json:"max_tokens,omitempty"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// convStartOptions are conv start's and conv chat's flags.
type convStartOptions struct {
	id       string
	llm      convLLM
	system   string
	budget   convBudget
	mode     string
	worktree bool
}

func (o *convStartOptions) register(cmd *cobra.Command, idFlag bool) {
	fs := cmd.Flags()
	if idFlag {
		fs.StringVar(&o.id, "id", "", "the conversation's id in the project (default a new ULID)")
	}
	fs.StringVar(&o.llm.Provider, "provider", "", "LLM provider for this conversation (openai, anthropic, scripted; default the project's)")
	fs.StringVar(&o.llm.Model, "model", "", "model for this conversation (default the project's)")
	fs.StringVar(&o.system, "system", "", "system prompt of this conversation")
	fs.Int64Var(&o.budget.MaxTokens, "max-tokens", 0, "the most tokens (input plus output, all turns) the conversation's model calls may use; once reached the turn ends with conversation.budget.exceeded (default no limit)")
	fs.StringVar(&o.mode, "mode", "", "permission mode: plan (read-only: no tool that writes or runs), ask (a person approves each tool call that writes or runs) or auto (the project's policy as it is; the default); conv mode changes it later")
	fs.BoolVar(&o.worktree, "worktree", false, "work in the conversation's own git worktree on branch jido/<conversation> (the project must be a git repository with a commit); conv stop --remove-worktree removes it")
	fs.Float64Var(&o.budget.MaxCostUSD, "max-cost", 0, "the most USD the conversation's model calls may cost, by the node operator's prices (providers: prices); once reached the turn ends with conversation.budget.exceeded (default no limit)")
}

func (o *convStartOptions) body(project string) convStartBody {
	b := convStartBody{Project: project, Conversation: o.id, System: o.system, Mode: o.mode, Worktree: o.worktree}
	if o.llm != (convLLM{}) {
		llm := o.llm
		b.LLM = &llm
	}
	if o.budget != (convBudget{}) {
		budget := o.budget
		b.Budget = &budget
	}
	return b
}

// startConversation asks the node to start a conversation of project and
// returns what it says of it.
func startConversation(ctx context.Context, r requester, subjects bus.Subjects, body convStartBody) (convapi.Info, error) {
	var info convapi.Info
	if b := body.Budget; b != nil {
		// The node checks it too; NaN or Inf would not even encode as
		// JSON, and the encoder's error says nothing of the flag.
		if err := (&conversation.Budget{MaxTokens: b.MaxTokens, MaxCostUSD: b.MaxCostUSD}).Check(); err != nil {
			return info, fmt.Errorf("conv start in project %s: %w", body.Project, err)
		}
	}
	if err := conversation.CheckMode(body.Mode); err != nil {
		return info, fmt.Errorf("conv start in project %s: --mode: %w", body.Project, err)
	}
	data, err := r.Request(ctx, subjects.API(convapi.Area, convapi.VerbStart), body)
	if err != nil {
		return info, fmt.Errorf("conv start in project %s: %w", body.Project, err)
	}
	if err := json.Unmarshal(data, &info); err != nil || info.ID == "" {
		return info, fmt.Errorf("conv start in project %s: reply %q: not a conversation (%v)", body.Project, data, err)
	}
	return info, nil
}

// requester is what the conversation commands ask the node through
// (natsbus.Requester; a fake in tests).
type requester interface {
	Request(ctx context.Context, subject string, req any) (json.RawMessage, error)
}

func newConvStartCmd() *cobra.Command {
	var (
		f    liveFlags
		opts convStartOptions
	)
	cmd := &cobra.Command{
		Use:   "start PROJECT",
		Short: "Start a conversation in an open project and print its CONV",
		Long: `Start starts a conversation of the open project PROJECT through a running
node (jido.api.conv.start) and prints its CONV,
<project-id>/<conversation-id>, for conv send, conv chat, conv follow.

--provider (one of the node's providers, by name) and --model override
the project's LLM settings (.jido/config.yaml) for this conversation;
--system sets its system prompt. They are recorded in
conversation.started. The endpoint and the variable holding its key are
the node operator's (serve --provider): a client that could choose them
could send the node's keys anywhere.

--max-tokens and --max-cost set the conversation's budget, over all its
turns: when the model calls have used that many tokens (input plus
output) or cost that many USD (by the operator's price table), the turn
ends with conversation.budget.exceeded instead of asking the model again,
and every later message gets the same event. To go on, start a new
conversation, or fork this one (conv fork): a fork's budget counts its
own calls.

--worktree (or worktree: true in the project's .jido/config.yaml) gives
the conversation its own git worktree, on branch jido/<conversation>,
in a folder beside the node's data dir: every tool call of the
conversation has it as its root, under the project's policy, so two
conversations never edit the same files and the checkout is untouched.
conv ls shows the branch; conv stop keeps the worktree, or removes it
with --remove-worktree.`,
		Example: `  jido-bus conv start demo
  jido-bus conv start demo --id review --model gpt-4.1 --system "Answer in one paragraph."
  jido-bus conv start demo --max-tokens 200000 --max-cost 2.50
  jido-bus conv start demo --mode plan
  jido-bus conv start demo --id fix --worktree`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.Contains(args[0], "/") {
				return fmt.Errorf("PROJECT %q: give the project's id alone (the conversation's id goes in --id)", args[0])
			}
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			info, err := startConversation(cmd.Context(), f.requester(nc, subjects), subjects, opts.body(args[0]))
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), info.ID)
			return err
		},
	}
	f.register(cmd)
	opts.register(cmd, true)
	documentJSON(cmd, `{"project","conversation","id":"<project>/<conversation>","stream","status"}.`)
	return cmd
}

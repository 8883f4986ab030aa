package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents/runtime"
)

// newAgentCmd is `jido-bus agent`: the agent control plane
// (jido.api.agent.*) from the command line.
func newAgentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Start, stop, call and inspect agents on a running node",
		Long: `The agent subcommands send requests to a running node's control plane
(jido.api.agent.<verb> on NATS, --nats-url) and print the reply. Anything
they do can be done with any NATS client too; see each one's --help.`,
	}
	cmd.AddCommand(newAgentStartCmd(), newAgentStopCmd(), newAgentStateCmd(), newAgentListCmd(),
		newAgentSignalCmd("call"), newAgentSignalCmd("cast"), newAgentAwaitCmd())
	return cmd
}

// agentRequest sends body to jido.api.agent.<verb> and returns the reply,
// or the error it carries.
func agentRequest(cmd *cobra.Command, f *liveFlags, verb string, body any) (json.RawMessage, error) {
	nc, subjects, err := f.connect()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	reply, err := f.requester(nc, subjects).Request(cmd.Context(), subjects.API("agent", verb), body)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", verb, err)
	}
	return reply, nil
}

func newAgentStartCmd() *cobra.Command {
	var (
		f       liveFlags
		id      string
		initial string
		options string
	)
	cmd := &cobra.Command{
		Use:   "start TYPE",
		Short: "Start an agent of a registered type",
		Example: `  jido-bus agent start counter --id c1
  jido-bus agent start counter --id c2 --initial '{"count":10}' --options '{"error_policy":{"max_errors":3}}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := map[string]any{"type": args[0]}
			if id != "" {
				req["id"] = id
			}
			for name, raw := range map[string]string{"initial_state": initial, "options": options} {
				if raw == "" {
					continue
				}
				if !json.Valid([]byte(raw)) {
					return fmt.Errorf("--%s is not valid JSON: %s", strings.TrimSuffix(name, "_state"), raw)
				}
				req[name] = json.RawMessage(raw)
			}
			reply, err := agentRequest(cmd, &f, "start", req)
			if err != nil {
				return err
			}
			return printAgentReply(cmd, f.json, "start", reply)
		},
	}
	f.register(cmd)
	documentJSON(cmd, agentInfoShape)
	cmd.Flags().StringVar(&id, "id", "", "the agent's id (default: a new ULID)")
	cmd.Flags().StringVar(&initial, "initial", "", "initial state, as a JSON object")
	cmd.Flags().StringVar(&options, "options", "", "start options, as a JSON object (error_policy, max_queue_size, max_queue_bytes, on_parent_death, default_dispatch, snapshot_every)")
	return cmd
}

func newAgentStopCmd() *cobra.Command {
	var (
		f           liveFlags
		reason      string
		dryRun, yes bool
	)
	cmd := &cobra.Command{
		Use:   "stop ID",
		Short: "Stop an agent for good (it stays stopped across restarts)",
		Long: `Stop an agent for good: it stays stopped across restarts. Its children
stop with it, unless started with on_parent_death "continue" or
"emit_orphan". Stopping an agent that has children asks first on a
terminal; --yes skips the question and is required when stdin is not a
terminal. --dry-run shows what would stop and stops nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgentStop(cmd, &f, args[0], reason, dryRun, yes)
		},
	}
	f.register(cmd)
	documentJSON(cmd, agentStopShape)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the agent's last log entry")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the agent and the children that would stop; stop nothing")
	addYesFlag(cmd, &yes)
	return cmd
}

func newAgentStateCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "state ID",
		Short: "Print an agent's state, status, version, queue, parent and children",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reply, err := agentRequest(cmd, &f, "state", map[string]string{"id": args[0]})
			if err != nil {
				return err
			}
			return printAgentReply(cmd, f.json, "state", reply)
		},
	}
	f.register(cmd)
	documentJSON(cmd, agentInfoShape)
	return cmd
}

func newAgentListCmd() *cobra.Command {
	var (
		f        liveFlags
		typ      string
		limit    int
		pageSize int
		after    string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agents of the node",
		Long: `List the agents of the node in id order, all of them: the node answers a
page at a time (jido.api.agent.list with "limit" and "after") and this
command asks for pages until the last. --limit stops after that many
agents; with -o json the output then carries "next", a cursor that
--after continues from.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 || pageSize < 0 {
				return fmt.Errorf("--limit %d, --page-size %d: want 0 (no bound; the node's page size) or more", limit, pageSize)
			}
			all, next, err := listAgents(cmd, &f, typ, limit, pageSize, after)
			if err != nil {
				return err
			}
			if f.json {
				return writeList(cmd.OutOrStdout(), "agents", all, next)
			}
			tw := newTable(cmd.OutOrStdout(), "ID", "TYPE", "STATUS", "VERSION", "QUEUE", "ERRORS", "PARENT")
			for _, raw := range all {
				var a runtime.Info
				if err := json.Unmarshal(raw, &a); err != nil {
					return fmt.Errorf("agent list: reply holds %s: %w", raw, err)
				}
				parent := ""
				if a.Parent != nil {
					parent = a.Parent.ID
				}
				tw.row(a.ID, a.Type, a.Status, a.Version, a.QueueLength, a.ErrorCount, parent)
			}
			if err := tw.flush(); err != nil {
				return err
			}
			if next != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more agents follow; continue with --after %s\n", next)
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, agentListShape)
	cmd.Flags().StringVar(&typ, "type", "", "only agents of this type")
	cmd.Flags().IntVar(&limit, "limit", 0, "stop after this many agents (0: list every agent)")
	cmd.Flags().IntVar(&pageSize, "page-size", 0, "agents per request (0: the node's default page)")
	cmd.Flags().StringVar(&after, "after", "", "start after this cursor (the \"next\" of an earlier --json listing)")
	return cmd
}

// listAgents asks for pages of agents until the last one, or until limit
// agents (0: no limit), and returns them with the cursor of what follows
// when limit stopped it.
func listAgents(cmd *cobra.Command, f *liveFlags, typ string, limit, pageSize int, after string) ([]json.RawMessage, string, error) {
	var all []json.RawMessage
	for {
		req := map[string]any{}
		if typ != "" {
			req["type"] = typ
		}
		if after != "" {
			req["after"] = after
		}
		page := pageSize
		if limit > 0 && (page == 0 || limit-len(all) < page) {
			page = limit - len(all)
		}
		if page > 0 {
			req["limit"] = page
		}
		reply, err := agentRequest(cmd, f, "list", req)
		if err != nil {
			return nil, "", err
		}
		var r struct {
			Agents []json.RawMessage `json:"agents"`
			Next   string            `json:"next"`
		}
		if err := json.Unmarshal(reply, &r); err != nil {
			return nil, "", fmt.Errorf("agent list: reply %.200s: %w", reply, err)
		}
		all = append(all, r.Agents...)
		if r.Next == "" || (limit > 0 && len(all) >= limit) {
			return all, r.Next, nil
		}
		if r.Next == after {
			return nil, "", fmt.Errorf("agent list: the node gave the same cursor %q twice", after)
		}
		after = r.Next
	}
}

func newAgentSignalCmd(verb string) *cobra.Command {
	var f liveFlags
	short := "Send a signal and wait for the committed state"
	if verb == "cast" {
		short = "Send a signal without waiting"
	}
	cmd := &cobra.Command{
		Use:     verb + " ID TYPE [DATA]",
		Short:   short,
		Example: fmt.Sprintf(`  jido-bus agent %s c1 counter.increment '{"by":2}'`, verb),
		Args:    cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := map[string]any{"id": args[0], "type": args[1]}
			if len(args) == 3 {
				if !json.Valid([]byte(args[2])) {
					return fmt.Errorf("DATA is not valid JSON: %s", args[2])
				}
				req["data"] = json.RawMessage(args[2])
			}
			reply, err := agentRequest(cmd, &f, verb, req)
			if err != nil {
				return err
			}
			return printAgentReply(cmd, f.json, verb, reply)
		},
	}
	f.register(cmd)
	if verb == "cast" {
		documentJSON(cmd, agentCastShape)
	} else {
		documentJSON(cmd, agentCallShape)
	}
	return cmd
}

func newAgentAwaitCmd() *cobra.Command {
	var (
		f       liveFlags
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "await ID",
		Short: `Wait until an agent's state.status is "completed" or "failed"`,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.timeout = timeout + 5*time.Second
			reply, err := agentRequest(cmd, &f, "await", map[string]string{"id": args[0], "timeout": timeout.String()})
			if err != nil {
				return err
			}
			return printAgentReply(cmd, f.json, "await", reply)
		},
	}
	f.register(cmd)
	documentJSON(cmd, agentInfoShape)
	cmd.Flags().DurationVar(&timeout, "for", 30*time.Second, "how long to wait before giving up with a diagnostic")
	return cmd
}

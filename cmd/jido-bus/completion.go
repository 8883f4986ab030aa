package main

import (
	"context"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// completionTimeout bounds what a completion asks a node: a shell waiting
// on a Tab must not hang when no node answers.
const completionTimeout = 2 * time.Second

// completionPageSize bounds how many names one completion fetches.
const completionPageSize = 1000

// lister fetches the names a command's first argument can be, from the
// node its connection flags name.
type lister func(ctx context.Context, r natsbus.Requester, toComplete string) ([]string, error)

// argCompletions are the commands whose first argument the shell
// completion (`jido-bus completion`) fills in from a running node, by
// command path below the root.
var argCompletions = map[string]lister{
	"agent stop":   listAgentIDs,
	"agent state":  listAgentIDs,
	"agent call":   listAgentIDs,
	"agent cast":   listAgentIDs,
	"agent await":  listAgentIDs,
	"conv show":    listConvIDs,
	"conv fork":    listConvIDs,
	"conv send":    listConvIDs,
	"conv follow":  listConvIDs,
	"log show":     listStreams,
	"log tail":     listStreams,
	"log export":   listStreams,
	"log truncate": listStreams,
	"log replay":   listStreams,

	"project get":         listProjectIDs,
	"project tools":       listProjectIDs,
	"project assets":      listProjectIDs,
	"project reload":      listProjectIDs,
	"project close":       listProjectIDs,
	"project call":        listProjectIDs,
	"project diagnostics": listProjectIDs,
}

// addCompletions registers the completions of argCompletions, and of
// conv show's --view, on the commands under root.
func addCompletions(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if list, ok := argCompletions[path]; ok {
			c.ValidArgsFunction = completeFirstArg(list)
		}
		if path == "conv show" {
			_ = c.RegisterFlagCompletionFunc("view", cobra.FixedCompletions(views.Views(), cobra.ShellCompDirectiveNoFileComp))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeFirstArg completes the first argument with what list returns;
// when no node answers it offers nothing, quietly.
func completeFirstArg(list lister) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		f := connFlagsOf(cmd)
		f.timeout = min(f.timeout, completionTimeout)
		nc, subjects, err := f.connect(nats.Timeout(completionTimeout), nats.NoReconnect(), nats.Name("jido-bus completion"))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer nc.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		names, err := list(ctx, f.requester(nc, subjects), toComplete)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// connFlagsOf reads the connection flags registered on cmd, for code that
// does not hold the command's own connFlags (completions).
func connFlagsOf(cmd *cobra.Command) *connFlags {
	fs := cmd.Flags()
	f := &connFlags{flags: fs, prefix: bus.DefaultPrefix, timeout: completionTimeout}
	if fl := fs.Lookup("context"); fl != nil {
		f.context = fl.Value.String()
	}
	if fl := fs.Lookup("prefix"); fl != nil {
		f.prefix = fl.Value.String()
	}
	if d, err := fs.GetDuration("timeout"); err == nil {
		f.timeout = d
	}
	return f
}

func listAgentIDs(ctx context.Context, r natsbus.Requester, _ string) ([]string, error) {
	var reply struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
	}
	if err := r.Call(ctx, "agent", "list", map[string]any{"limit": completionPageSize}, &reply); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(reply.Agents))
	for _, a := range reply.Agents {
		ids = append(ids, a.ID)
	}
	return ids, nil
}

func listConvIDs(ctx context.Context, r natsbus.Requester, _ string) ([]string, error) {
	c := convapi.Client{NC: r.NC, Subjects: r.Subjects, Timeout: r.Timeout, Denials: r.Denials}
	reply, err := c.List(ctx, convapi.ListRequest{Limit: completionPageSize})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(reply.Conversations))
	for _, s := range reply.Conversations {
		ids = append(ids, s.Conv)
	}
	return ids, nil
}

func listStreams(ctx context.Context, r natsbus.Requester, toComplete string) ([]string, error) {
	c := logapi.Client{NC: r.NC, Subjects: r.Subjects, Timeout: r.Timeout, Denials: r.Denials}
	reply, err := c.Streams(ctx, logapi.StreamsRequest{Prefix: toComplete})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(reply.Streams))
	for _, s := range reply.Streams {
		names = append(names, s.Stream)
	}
	return names, nil
}

func listProjectIDs(ctx context.Context, r natsbus.Requester, _ string) ([]string, error) {
	var reply projectapi.ListReply
	if err := r.Call(ctx, projectapi.Area, projectapi.VerbList, struct{}{}, &reply); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(reply.Projects))
	for _, p := range reply.Projects {
		ids = append(ids, p.ID)
	}
	return ids, nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
)

// newProjectionCmd is `jido-bus projection`: list, rebuild and query the
// read models folded from the log.
func newProjectionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projection",
		Short: "List, rebuild and query projections (read models of the log)",
		Long: `Projections fold the event log into read models: the conversation
timeline, llm_context, status and diagnostics, one state per conversation.

On a data directory a subcommand opens the log and the projections
(<data-dir>/projections) itself and folds what the log holds before
answering.

` + sourceHelp,
	}
	cmd.AddCommand(newProjectionLsCmd(), newProjectionRebuildCmd(), newProjectionGetCmd())
	return cmd
}

func newProjectionLsCmd() *cobra.Command {
	var f logFlags
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the projections with their position and lag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withProjections(cmd, true, func(ctx context.Context, b *openedProjections) error {
				reply, err := b.List(ctx, projectionapi.ListRequest{})
				if err != nil {
					return err
				}
				if f.json {
					return writeList(cmd.OutOrStdout(), "projections", reply.Projections, nil)
				}
				tw := newTable(cmd.OutOrStdout(), "NAME", "VERSION", "POSITION", "HEAD", "LAG", "KEYS", "APPLIED", "STATE")
				for _, p := range reply.Projections {
					tw.row(p.Name, p.Version, p.Position, p.Head, p.Lag, p.Keys, p.Applied, projectionState(p))
				}
				return tw.flush()
			})
		},
	}
	f.register(cmd)
	documentJSON(cmd, projectionListShape)
	return cmd
}

func projectionState(p projections.Status) string {
	switch {
	case p.Rebuilding:
		return "rebuilding"
	case p.Lag > 0:
		return "catching up"
	case p.Running:
		return "following"
	}
	return "caught up"
}

func newProjectionRebuildCmd() *cobra.Command {
	var f logFlags
	cmd := &cobra.Command{
		Use:   "rebuild NAME",
		Short: "Fold a projection again from the start of the log",
		Long: `Rebuild discards a projection's states and folds the whole log again,
showing a progress bar on a terminal. A running node rebuilds while it
keeps following the log; this command waits until the rebuild has caught up.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			// The rebuild's fold is the catch-up: not one before it.
			return f.withProjections(cmd, false, func(ctx context.Context, b *openedProjections) error {
				start, err := b.Rebuild(ctx, projectionapi.RebuildRequest{Name: name})
				if err != nil {
					return err
				}
				if b.runner != nil {
					if err := b.catchUp(ctx, cmd.OutOrStdout()); err != nil {
						return err
					}
				} else if err := waitRebuilt(cmd, b, name, start.Status.Head); err != nil {
					return err
				}
				reply, err := b.List(ctx, projectionapi.ListRequest{})
				if err != nil {
					return err
				}
				for _, p := range reply.Projections {
					if p.Name != name {
						continue
					}
					if f.json {
						return writeJSONLine(cmd, p)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "rebuilt %s (version %s): %d entries folded into %d keys, position %d\n", p.Name, p.Version, p.Applied, p.Keys, p.Position)
				}
				return nil
			})
		},
	}
	f.register(cmd)
	documentJSON(cmd, `the rebuilt projection as one object, as in 'projection ls -o json'.`)
	return cmd
}

// waitRebuilt polls a running node until projection name has caught up
// after a rebuild, drawing its progress.
func waitRebuilt(cmd *cobra.Command, b *openedProjections, name string, head uint64) error {
	bar := newProgress(cmd.OutOrStdout(), int64(head), "rebuilding "+name)
	defer bar.finish()
	for {
		reply, err := b.List(cmd.Context(), projectionapi.ListRequest{})
		if err != nil {
			return err
		}
		for _, p := range reply.Projections {
			if p.Name != name {
				continue
			}
			bar.set(int64(min(p.Position, head)))
			if !p.Rebuilding && p.Lag == 0 {
				return nil
			}
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func newProjectionGetCmd() *cobra.Command {
	var (
		f  logFlags
		at uint64
	)
	cmd := &cobra.Command{
		Use:   "get NAME KEY",
		Short: "Print one key's state of a projection as JSON",
		Long: `Get prints the state of KEY (for the conversation read models,
<project-id>/<conversation-id>) as of the projection's checkpoint, or with
--at SEQ as it was at global sequence SEQ, folded afresh from the log.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// --at folds afresh from the log: nothing to catch up first.
			return f.withProjections(cmd, at == 0, func(ctx context.Context, b *openedProjections) error {
				st, err := b.Get(ctx, projectionapi.GetRequest{Name: args[0], Key: args[1], At: projections.Until{GlobalSeq: at}})
				if err != nil {
					return err
				}
				if f.json {
					return writeJSONLine(cmd, st)
				}
				var pretty any
				if err := json.Unmarshal(st.State, &pretty); err != nil {
					return err
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(pretty)
			})
		},
	}
	cmd.Flags().Uint64Var(&at, "at", 0, "fold up to this global sequence instead of reading the checkpoint")
	f.register(cmd)
	documentJSON(cmd, `{"name","key","position","state":{…}} on one line.`)
	return cmd
}

// projectionListShape is what 'projection ls -o json' prints.
const projectionListShape = `{"projections":[{"name","version","position","checkpoint",
"head","lag","keys","applied","rebuilding"?,"running","damaged"?}…],"next":null}.`

// writeJSONLine prints v as one line of JSON.
func writeJSONLine(cmd *cobra.Command, v any) error { return writeJSON(cmd.OutOrStdout(), v) }

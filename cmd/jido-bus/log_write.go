package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// importChunk bounds one import request: events and bytes (well under
// NATS's default 1 MiB payload).
const (
	importChunkEvents = 500
	importChunkBytes  = 512 << 10
)

func newLogImportCmd() *cobra.Command {
	var f logFlags
	var stream string
	cmd := &cobra.Command{
		Use:   "import FILE --stream NAME",
		Short: "Append CloudEvents from a JSON-lines file to a stream (idempotent)",
		Long: `Append the events in FILE ('-' for stdin), structured CloudEvents JSON
one per line as 'jido-bus log export' writes them, to the stream --stream.
Events already in the stream (same source and id) are skipped, so
importing the same file twice adds nothing. Events go in chunks of up to
500, each chunk atomic; an error names the line.`,
		Example: `  jido-bus log import c1.jsonl --stream agent/c1
  jido-bus log export agent/c1 | jido-bus log import - --stream agent/c1-copy`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, size, err := openInput(cmd, args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			ctx := cmd.Context()
			b, done, err := f.openBackend(ctx, true)
			if err != nil {
				return err
			}
			defer done()
			bar := newProgress(cmd.OutOrStdout(), size, "import "+stream)
			defer bar.finish()
			var total logapi.ImportReply
			var chunk []json.RawMessage
			chunkBytes, firstLine, line := 0, 1, 0
			flush := func() error {
				if len(chunk) == 0 {
					return nil
				}
				r, err := b.Import(ctx, logapi.ImportRequest{Stream: stream, Events: chunk})
				if err != nil {
					return fmt.Errorf("import %s, lines %d-%d: %w", stream, firstLine, line, err)
				}
				total.Appended += r.Appended
				total.Duplicates += r.Duplicates
				total.Version = r.Version
				bar.add(int64(chunkBytes))
				chunk, chunkBytes, firstLine = nil, 0, line+1
				return nil
			}
			sc := bufio.NewScanner(in)
			sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
			for sc.Scan() {
				line++
				text := bytes.TrimSpace(sc.Bytes())
				if len(text) == 0 {
					continue
				}
				if !json.Valid(text) {
					return fmt.Errorf("import %s: line %d is not JSON", stream, line)
				}
				if chunkBytes+len(text) > importChunkBytes {
					line-- // the chunk ends before this line
					if err := flush(); err != nil {
						return err
					}
					line++
				}
				chunk = append(chunk, json.RawMessage(bytes.Clone(text)))
				chunkBytes += len(sc.Bytes()) + 1
				if len(chunk) == importChunkEvents {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if err := sc.Err(); err != nil {
				return fmt.Errorf("import %s: read %s after line %d: %w", stream, args[0], line, err)
			}
			if err := flush(); err != nil {
				return err
			}
			bar.finish()
			if f.json {
				return printJSONLine(cmd.OutOrStdout(), total)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: appended %d, already present %d, version %d\n",
				stream, total.Appended, total.Duplicates, total.Version)
			return err
		},
	}
	f.register(cmd)
	// The one log verb that may create the data directory it is given.
	cmd.Flags().Lookup("data-dir").Usage = "import into this data directory, created if missing, and no node (without it: the default node, else " + dataDirHelp + ")"
	documentJSON(cmd, `{"appended":N,"duplicates":N,"version":N}: the events
added, those already present, and the stream's version afterwards.`)
	cmd.Flags().StringVar(&stream, "stream", "", "stream to append to (required)")
	_ = cmd.MarkFlagRequired("stream")
	return cmd
}

// openInput opens FILE or stdin for '-', and returns its size when known
// (-1 otherwise) for the progress bar.
func openInput(cmd *cobra.Command, name string) (io.ReadCloser, int64, error) {
	if name == "-" {
		return io.NopCloser(cmd.InOrStdin()), -1, nil
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	size := int64(-1)
	if st, err := fh.Stat(); err == nil {
		size = st.Size()
	}
	return fh, size, nil
}

func newLogTruncateCmd() *cobra.Command {
	var f logFlags
	var before uint64
	var dryRun, yes bool
	cmd := &cobra.Command{
		Use:   "truncate STREAM --before N",
		Short: "Remove the entries of a stream below a sequence",
		Long: `Remove the entries of STREAM whose sequence is below --before. The
stream keeps its version; reading a removed position then says it is gone.
This cannot be undone; --dry-run shows what would go (count, sequences,
bytes) and changes nothing. On a terminal it says what would go and asks
before removing anything; --yes skips the question, and is required when
stdin is not a terminal (a script): without it the command refuses.

An agent's stream (agent/…, conversation/…, any stream an agent recovers
from) keeps what recovery needs: through a running node the agent is
snapshotted first; on a data directory with no node running, a cut past
the agent's latest snapshot is refused and the message says how far you
may cut. The runtime's own streams (runtime/agents, the list of agents)
are never truncated.

Through a cluster node the replicated log is truncated the same way, in
whole appends: one that straddles --before stays whole, and a stream's
last append always stays (it carries the version every commit is fenced
on). A node that does not own the agent cannot snapshot it: the cut must
then be covered by the agent's snapshot, and the refusal says how far.`,
		Example: `  jido-bus log truncate agent/c1 --before 1000 --dry-run
  jido-bus log truncate agent/c1 --before 1000
  jido-bus log truncate agent/c1 --before 1000 --yes   # in a script`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if before == 0 {
				return errors.New("--before must be a sequence of 1 or more: entries below it are removed")
			}
			b, done, err := f.openBackend(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer done()
			// A dry run first: it says what the question is about, and a
			// refusal (a stream that does not exist, a cut recovery
			// needs) comes before anyone is asked anything.
			req := logapi.TruncateRequest{Stream: args[0], Before: before, DryRun: true}
			r, err := b.Truncate(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("truncate %s before seq %d: %w", args[0], before, err)
			}
			if !dryRun && r.Removed > 0 {
				question := fmt.Sprintf("remove %d entries of %s (seq %d-%d, %d bytes) for good", r.Removed, args[0], r.From, r.To, r.Bytes)
				if err := confirm(cmd, yes, question); err != nil {
					return err
				}
				req.DryRun = false
				if r, err = b.Truncate(cmd.Context(), req); err != nil {
					return fmt.Errorf("truncate %s before seq %d: %w", args[0], before, err)
				}
			}
			if f.json {
				return printJSONLine(cmd.OutOrStdout(), r)
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			if r.Removed == 0 {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: nothing below seq %d to remove\n", args[0], before)
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %s %d entries, seq %d-%d, %d bytes\n", args[0], verb, r.Removed, r.From, r.To, r.Bytes)
			return err
		},
	}
	addYesFlag(cmd, &yes)
	f.register(cmd)
	documentJSON(cmd, `{"removed":N,"from":SEQ,"to":SEQ,"bytes":N,"dry_run"?:true}:
what was (or, with --dry-run, would be) removed.`)
	cmd.Flags().Uint64Var(&before, "before", 0, "remove entries with a sequence below this (required)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be removed; change nothing")
	_ = cmd.MarkFlagRequired("before")
	return cmd
}

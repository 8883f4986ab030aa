package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

func newLogStreamsCmd() *cobra.Command {
	var f logFlags
	var prefix string
	cmd := &cobra.Command{
		Use:   "streams",
		Short: "List streams with their version, retained entries and size",
		Long: `List the streams of the log: HEAD is the stream's version (its last
sequence), FIRST the first sequence still retained, ENTRIES and BYTES what
is retained.`,
		Example: `  jido-bus log streams
  jido-bus log streams --stream-prefix agent/ -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, done, err := f.openBackend(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer done()
			var all []eventlog.StreamInfo
			req := logapi.StreamsRequest{Prefix: prefix}
			for {
				r, err := b.Streams(cmd.Context(), req)
				if err != nil {
					return err
				}
				all = append(all, r.Streams...)
				if r.Next == "" {
					break
				}
				req.After = r.Next
			}
			return printStreams(cmd.OutOrStdout(), all, f.json)
		},
	}
	f.register(cmd)
	documentJSON(cmd, streamsShape)
	cmd.Flags().StringVar(&prefix, "stream-prefix", "", "only streams whose name starts with this")
	return cmd
}

func newLogShowCmd() *cobra.Command {
	var f logFlags
	var from uint64
	var limit int
	var types string
	cmd := &cobra.Command{
		Use:   "show STREAM",
		Short: "Print entries of a stream, oldest first",
		Long: `Print the entries of STREAM from sequence --from (default: the first
retained), at most --limit of them, optionally only those whose type
matches --type (a pattern: '*' is one segment, '**' any number). The
dead letters (STREAM dlq) are listed by why they were refused: the
reason, the subject the input came on and the error.`,
		Example: `  jido-bus log show agent/c1
  jido-bus log show agent/c1 --from 100 --limit 20 --type 'user.**'
  jido-bus log show dlq
  jido-bus log show conversation/proj/conv -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return fmt.Errorf("--limit %d: want 0 (all) or more", limit)
			}
			b, done, err := f.openBackend(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer done()
			p := newEntryPrinter(cmd.OutOrStdout(), f.json, args[0])
			next, more, err := readPages(cmd.Context(), b, logapi.ReadRequest{Stream: args[0], From: from, Types: types}, limit,
				func(r logapi.ReadReply) error {
					warnDamaged(cmd.ErrOrStderr(), r.Damaged)
					for _, e := range r.Entries {
						if err := p.print(e); err != nil {
							return err
						}
					}
					return nil
				})
			if err != nil && p.rows == 0 && isDeadLetters(args[0]) && isNoStream(err) {
				// The first dead letter makes the stream: none yet is an
				// answer, not an error.
				fmt.Fprintln(cmd.ErrOrStderr(), "jido-bus: no dead letters: nothing has been refused")
				return p.finish(0, "")
			}
			if err != nil && p.rows == 0 {
				return err // no table with nothing in it above the error
			}
			if err != nil {
				_ = p.flush()
				return err
			}
			if !more {
				next = 0
			}
			return p.finish(next, "--from")
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"entries":[`+entryShape+`…],"next":N|null}:
next is the --from that continues when --limit stopped the listing before
the end, null otherwise. The table then ends with a line naming it.`)
	cmd.Flags().Uint64Var(&from, "from", 0, "first sequence to print (0: the first retained)")
	cmd.Flags().IntVar(&limit, "limit", 100, "most entries to print (0: all)")
	cmd.Flags().StringVar(&types, "type", "", "only entries whose type matches this pattern")
	return cmd
}

// readPages reads forward page by page from req.From, calling page for
// each, until the end of the log or limit entries (0: no limit). It
// returns the position after the last entry read, and whether more
// entries follow it (limit stopped the read, not the end of the log).
func readPages(ctx context.Context, b logBackend, req logapi.ReadRequest, limit int, page func(logapi.ReadReply) error) (next uint64, more bool, err error) {
	read := 0
	for {
		req.Limit = logapi.DefaultPageSize
		if limit > 0 {
			req.Limit = min(req.Limit, limit-read)
		}
		r, err := b.Read(ctx, req)
		if err != nil {
			return req.From, false, readError(req.Stream, req.From, err)
		}
		if err := page(r); err != nil {
			return req.From, false, err
		}
		read += len(r.Entries)
		req.From = r.Next
		if !r.More {
			return req.From, false, nil
		}
		if limit > 0 && read >= limit {
			return req.From, moreAfter(ctx, b, req), nil
		}
	}
}

// moreAfter reports whether an entry (matching req's types) is at or
// after req.From: a page that stopped at its limit may have stopped at
// the very end.
func moreAfter(ctx context.Context, b logBackend, req logapi.ReadRequest) bool {
	req.Limit = 1
	r, err := b.Read(ctx, req)
	return err != nil || len(r.Entries) > 0 || len(r.Damaged) > 0
}

func describeStream(stream string) string {
	if stream == "" {
		return "the global log"
	}
	return stream
}

// readError says what failed reading stream from sequence from (0: its
// start), and what to do about a stream that does not exist.
// isNoStream reports whether err says a stream does not exist.
func isNoStream(err error) bool {
	return bus.ErrorType(err) == bus.ReasonNotFound || errors.Is(err, eventlog.ErrNotFound)
}

func readError(stream string, from uint64, err error) error {
	// A node answers with the reason, the data directory with the error.
	if stream != "" && bus.ErrorType(err) == bus.ReasonNotFound {
		return fmt.Errorf("stream %s does not exist ('jido-bus log streams' lists the streams there are): %w", stream, err)
	}
	if stream != "" && errors.Is(err, eventlog.ErrNotFound) {
		// Read from a data dir: the same answer, and exit code 3, as a
		// node's not_found.
		return bus.Errorf(bus.ReasonNotFound, "stream %s does not exist ('jido-bus log streams' lists the streams there are): %v", stream, err)
	}
	if from == 0 {
		return fmt.Errorf("%s: %w", describeStream(stream), err)
	}
	return fmt.Errorf("%s from seq %d: %w", describeStream(stream), from, err)
}

func newLogTailCmd() *cobra.Command {
	var f logFlags
	var all, follow bool
	var lines int
	var types string
	var poll time.Duration
	cmd := &cobra.Command{
		Use:   "tail [STREAM | --all]",
		Short: "Print the last entries of a stream or of the whole log, and optionally follow it",
		Long: `Print the last -n entries of STREAM (or, with --all, of the global log,
across streams) and, with -f, keep printing new entries as they are
committed until interrupted. Following polls for the next page every
--poll, through the node or the data directory alike. Through a node it
outlives the node's restarts as 'nats sub' does: it says on stderr when
it lost the node and when it is back, and goes on after the last entry it
printed, so that nothing is printed twice or skipped.`,
		Example: `  jido-bus log tail agent/c1
  jido-bus log tail --all -f --type 'user.**'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return errors.New("name one STREAM or give --all, not both")
			}
			if lines < 0 {
				return fmt.Errorf("-n %d: want 0 (none: only what follows, with -f) or more", lines)
			}
			if follow && poll <= 0 {
				return fmt.Errorf("--poll %s: want a positive duration such as 250ms", poll)
			}
			stream := ""
			if len(args) == 1 {
				stream = args[0]
			}
			ctx := cmd.Context()
			var stderr io.Writer = cmd.ErrOrStderr()
			if follow {
				stderr = &syncWriter{w: stderr}
				f.follower = stderr
			}
			b, done, err := f.openBackend(ctx, false)
			if err != nil {
				return err
			}
			defer done()
			p := newEntryPrinter(cmd.OutOrStdout(), f.json, stream)
			p.lines = follow
			// A read's Limit 0 means a default page: -n 0 reads the last
			// entry of all to know where following starts, and prints none.
			first := logapi.ReadRequest{Stream: stream, Backward: true, Limit: lines, Types: types}
			if lines == 0 {
				first.Limit, first.Types = 1, ""
			}
			last, err := b.Read(ctx, first)
			if err != nil {
				return readError(stream, 0, err)
			}
			warnDamaged(cmd.ErrOrStderr(), last.Damaged)
			slices.Reverse(last.Entries)
			next := uint64(1)
			for _, e := range last.Entries {
				if lines == 0 {
					break
				}
				if err := p.print(e); err != nil {
					return err
				}
			}
			if n := len(last.Entries); n > 0 {
				next = position(stream, last.Entries[n-1]) + 1
			} else if stream != "" {
				// Nothing (matching) yet: follow from the stream's head.
				info, err := b.Streams(ctx, logapi.StreamsRequest{Prefix: stream})
				if err == nil && len(info.Streams) > 0 && info.Streams[0].Stream == stream {
					next = info.Streams[0].Head + 1
				}
			}
			if !follow {
				return p.finish(next, "")
			}
			if err := p.flush(); err != nil {
				return err
			}
			return followLog(ctx, b, logapi.ReadRequest{Stream: stream, From: next, Types: types}, poll, func(r logapi.ReadReply) error {
				warnDamaged(stderr, r.Damaged)
				for _, e := range r.Entries {
					if err := p.print(e); err != nil {
						return err
					}
				}
				return p.flush()
			})
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"entries":[`+entryShape+`…],"next":N}: next is
the position following would start at. With -f it prints one entry per
line instead, as each is committed (JSON lines), so that a program can read
it as it comes.`)
	cmd.Flags().BoolVar(&all, "all", false, "tail the global log instead of one stream")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new entries until interrupted")
	cmd.Flags().IntVarP(&lines, "lines", "n", 10, "how many of the last entries to print first")
	cmd.Flags().StringVar(&types, "type", "", "only entries whose type matches this pattern")
	cmd.Flags().DurationVar(&poll, "poll", 250*time.Millisecond, "how often -f looks for new entries")
	return cmd
}

// position is an entry's position in what is being read: its stream
// sequence, or its global sequence for the global log.
func position(stream string, e logapi.Entry) uint64 {
	if stream == "" {
		return e.GlobalSeq
	}
	return e.Seq
}

// followLog reads new pages from req.From until ctx ends, waiting poll
// between reads that found nothing new. An interrupt is a normal end.
// Through a node, a read that fails because the node is away (restarting,
// the connection reconnecting) is asked again from the position after the
// last entry printed: nothing is printed twice or skipped.
func followLog(ctx context.Context, b logBackend, req logapi.ReadRequest, poll time.Duration, page func(logapi.ReadReply) error) error {
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	_, remote := b.(logapi.Client)
	for {
		next, _, err := readPages(ctx, b, req, 0, page)
		if ctx.Err() != nil {
			return nil
		}
		req.From = next // the pages before a failed one were printed
		if err != nil && !(remote && transient(err)) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func newLogExportCmd() *cobra.Command {
	var f logFlags
	var from uint64
	cmd := &cobra.Command{
		Use:   "export STREAM",
		Short: "Write a stream's events to stdout as CloudEvents JSON, one per line",
		Long: `Write the events of STREAM to stdout as structured CloudEvents JSON, one
event per line, oldest first, starting at --from. The output is what
'jido-bus log import' reads. Damaged entries are reported on stderr and
skipped; the command then fails after writing the rest.`,
		Example: `  jido-bus log export agent/c1 > c1.jsonl
  jido-bus log export agent/c1 | jq .type`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			b, done, err := f.openBackend(ctx, false)
			if err != nil {
				return err
			}
			defer done()
			total := int64(-1)
			if info, err := b.Streams(ctx, logapi.StreamsRequest{Prefix: args[0]}); err == nil && len(info.Streams) > 0 && info.Streams[0].Stream == args[0] {
				total = int64(info.Streams[0].Count)
			}
			bar := newProgress(cmd.OutOrStdout(), total, "export "+args[0])
			defer bar.finish()
			out := cmd.OutOrStdout()
			var damaged []string
			_, _, err = readPages(ctx, b, logapi.ReadRequest{Stream: args[0], From: from}, 0, func(r logapi.ReadReply) error {
				warnDamaged(cmd.ErrOrStderr(), r.Damaged)
				for _, d := range r.Damaged {
					damaged = append(damaged, d.Position())
				}
				for _, e := range r.Entries {
					if _, err := fmt.Fprintf(out, "%s\n", e.Event); err != nil {
						return err
					}
				}
				bar.add(int64(len(r.Entries)))
				return nil
			})
			if err != nil {
				return err
			}
			if len(damaged) > 0 {
				return fmt.Errorf("export %s: %d damaged entries skipped: %v", args[0], len(damaged), damaged)
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `what it always prints: one structured CloudEvent per line, the
format 'log import' reads (JSON lines, not one object: an export may be
larger than memory).`)
	cmd.Flags().Uint64Var(&from, "from", 0, "first sequence to export (0: the first retained)")
	return cmd
}

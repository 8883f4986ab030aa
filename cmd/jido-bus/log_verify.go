package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

func newLogVerifyCmd() *cobra.Command {
	var f logFlags
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every entry's checksum and report damaged entries",
		Long: `Read every entry of the log (its stream copy and its global copy), check
its checksum, encoding and key, and compare each stream's metadata with
its entries. Damaged entries are listed by stream and sequence; the rest
stay readable. With --data-dir, opening the log also replays its
write-ahead log: damage there (records after a damaged one, not a write
torn by a crash) is reported with the file and offset, as is a damaged
table file (.sst). Exits 0 when all is well, 2 when damage was found, 1
when the check could not run.`,
		Example: `  jido-bus log verify
  jido-bus log verify --data-dir /var/lib/jido-bus -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			b, done, err := f.openBackend(ctx, false)
			if errors.Is(err, eventlog.ErrCorrupt) {
				// Opening replays the write-ahead log: damage there (or in
				// a file read while opening) is a finding, not a failure to
				// run.
				return damaged(out, f.json, err)
			}
			if err != nil {
				return err
			}
			defer done()
			if local, ok := b.(logapi.Local); ok {
				// In process the scan can report progress.
				var total uint64
				for _, s := range local.Log.Streams("") {
					total += 2 * s.Count
				}
				bar := newProgress(cmd.OutOrStdout(), int64(total), "verify")
				defer bar.finish()
				local.VerifyProgress = func(n uint64) { bar.set(int64(n)) }
				b = local
			}
			report, err := b.Verify(ctx, logapi.VerifyRequest{})
			if errors.Is(err, eventlog.ErrCorrupt) || bus.ErrorType(err) == eventlog.ReasonCorrupt {
				return damaged(out, f.json, err) // a damaged file stopped the scan
			}
			if err != nil {
				return fmt.Errorf("verify: %w", err)
			}
			if f.json {
				if report.Damaged == nil {
					report.Damaged = []*eventlog.CorruptError{} // [] for "none", never null
				}
				if err := printJSONLine(out, report); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "checked %d stream entries and %d global entries\n", report.StreamEntries, report.GlobalEntries)
				for _, d := range report.Damaged {
					fmt.Fprintf(out, "DAMAGED %s: %s\n", d.Position(), d.Reason)
				}
			}
			if !report.OK() {
				return exitError{code: 2, err: fmt.Errorf("verify: %d damaged entries", len(report.Damaged))}
			}
			if !f.json {
				fmt.Fprintln(out, "ok")
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"stream_entries":N,"global_entries":N,"damaged":[{"stream",
"seq","global_seq","reason",…}…]} ("damaged" is [] when all is well), or
{"damaged_file":"<what and where>"} when a damaged file stopped the check.`)
	return cmd
}

// damaged reports a damaged file that stopped the check (a write-ahead
// log or table file) and returns verify's "damage found" exit.
func damaged(out io.Writer, asJSON bool, err error) error {
	if asJSON {
		if perr := printJSONLine(out, map[string]any{"damaged_file": err.Error()}); perr != nil {
			return perr
		}
	} else {
		fmt.Fprintf(out, "DAMAGED %v\n", err)
	}
	return exitError{code: 2, err: fmt.Errorf("verify: %w", err)}
}

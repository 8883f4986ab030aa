package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// printJSONLine writes v as one line of JSON.
func printJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func printStreams(w io.Writer, streams []eventlog.StreamInfo, asJSON bool) error {
	if asJSON {
		for _, s := range streams {
			if err := printJSONLine(w, s); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tHEAD\tFIRST\tENTRIES\tBYTES")
	for _, s := range streams {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", s.Stream, s.Head, s.First, s.Count, s.Bytes)
	}
	return tw.Flush()
}

// entryPrinter prints entries as a table (header once) or JSON lines.
type entryPrinter struct {
	w      io.Writer
	asJSON bool
	tw     *tabwriter.Writer
	rows   int // entries printed
}

func newEntryPrinter(w io.Writer, asJSON bool) *entryPrinter {
	p := &entryPrinter{w: w, asJSON: asJSON}
	if !asJSON {
		p.tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(p.tw, "STREAM\tSEQ\tGLOBAL\tCOMMITTED\tTYPE\tID\tSOURCE")
	}
	return p
}

func (p *entryPrinter) print(e logapi.Entry) error {
	p.rows++
	if p.asJSON {
		return printJSONLine(p.w, e)
	}
	var ev bus.Signal
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		return fmt.Errorf("%s seq %d: %w", e.Stream, e.Seq, err)
	}
	fmt.Fprintf(p.tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", e.Stream, e.Seq, e.GlobalSeq,
		e.Time.Local().Format(time.DateTime), ev.Type(), ev.ID(), ev.Source())
	return nil
}

// flush writes out what the table holds so far.
func (p *entryPrinter) flush() error {
	if p.tw != nil {
		return p.tw.Flush()
	}
	return nil
}

// warnDamaged reports damaged entries met in a read on stderr.
func warnDamaged(w io.Writer, damaged []*eventlog.CorruptError) {
	for _, d := range damaged {
		fmt.Fprintf(w, "jido-bus: damaged entry %s skipped: %s\n", d.Position(), d.Reason)
	}
}

// progress is a progress bar on stderr, drawn only when out is a terminal,
// so that piped and scripted runs stay clean.
type progress struct{ bar *progressbar.ProgressBar }

func newProgress(out io.Writer, total int64, what string) progress {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return progress{}
	}
	return progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())}
}

func (p progress) add(n int64) {
	if p.bar != nil {
		_ = p.bar.Add64(n)
	}
}

func (p progress) set(n int64) {
	if p.bar != nil {
		_ = p.bar.Set64(n)
	}
}

func (p progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

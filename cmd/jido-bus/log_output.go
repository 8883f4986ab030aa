package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// printJSONLine writes v as one line of JSON.
func printJSONLine(w io.Writer, v any) error { return writeJSON(w, v) }

// streamsShape is what 'log streams -o json' prints.
const streamsShape = `{"streams":[{"stream","head","first","count","bytes"}…],"next":null}.`

func printStreams(w io.Writer, streams []eventlog.StreamInfo, asJSON bool) error {
	if asJSON {
		return writeList(w, "streams", streams, nil)
	}
	t := newTable(w, "STREAM", "HEAD", "FIRST", "ENTRIES", "BYTES")
	for _, s := range streams {
		t.row(s.Stream, s.Head, s.First, s.Count, s.Bytes)
	}
	return t.flush()
}

// entryShape is one entry as the log commands print it in JSON.
const entryShape = `{"stream","seq","global_seq","time","event":<CloudEvent>}`

// entryPrinter prints entries as a table (header once), as the list
// shape {"entries":[…],"next":…} (JSON, collected until finish), or, for
// a follower, as one JSON entry per line.
type entryPrinter struct {
	w      io.Writer
	asJSON bool
	// deadLetters: the table is of the stream dlq, whose rows say why
	// each input was refused (deadLetterRow).
	deadLetters bool
	lines       bool // JSON: one entry per line as it comes, not one list
	tw          *table
	entries     []logapi.Entry
	rows        int // entries printed
}

// newEntryPrinter prints entries of stream ("" for entries of every
// stream).
func newEntryPrinter(w io.Writer, asJSON bool, stream string) *entryPrinter {
	p := &entryPrinter{w: w, asJSON: asJSON, entries: []logapi.Entry{}, deadLetters: isDeadLetters(stream)}
	switch {
	case asJSON:
	case p.deadLetters:
		p.tw = newTable(w, deadLetterColumns...)
	default:
		p.tw = newTable(w, "STREAM", "SEQ", "GLOBAL", "COMMITTED", "TYPE", "ID", "SOURCE")
	}
	return p
}

func (p *entryPrinter) print(e logapi.Entry) error {
	p.rows++
	if p.asJSON {
		if p.lines {
			return writeJSON(p.w, e)
		}
		p.entries = append(p.entries, e)
		return nil
	}
	var ev bus.Signal
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		return fmt.Errorf("%s seq %d: %w", e.Stream, e.Seq, err)
	}
	if p.deadLetters {
		if row, ok := deadLetterRow(e, ev); ok {
			p.tw.row(row...)
			return nil
		}
	}
	p.tw.row(e.Stream, e.Seq, e.GlobalSeq, e.Time.Local().Format(time.DateTime), ev.Type(), ev.ID(), ev.Source())
	return nil
}

// flush writes out what the table holds so far (a JSON list waits for
// finish).
func (p *entryPrinter) flush() error {
	if p.tw != nil {
		return p.tw.flush()
	}
	return nil
}

// finish ends a listing: the JSON list with next (0: nothing follows,
// null), or the table and, when more follows, a last line naming the
// flag and value that continue it.
func (p *entryPrinter) finish(next uint64, flag string) error {
	if p.asJSON {
		if p.lines {
			return nil
		}
		var n any
		if next > 0 {
			n = next
		}
		return writeList(p.w, "entries", p.entries, n)
	}
	if err := p.flush(); err != nil {
		return err
	}
	if next > 0 && flag != "" {
		_, err := fmt.Fprintf(p.w, "(more entries follow; continue with %s %d)\n", flag, next)
		return err
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// emitsBackend reads emits: a node's log.emits (emitapi.Client) or the
// data directory opened here (emitapi.Local).
type emitsBackend interface {
	Emits(context.Context, runtime.EmitsRequest) (runtime.EmitsPage, error)
}

var (
	_ emitsBackend = emitapi.Client{}
	_ emitsBackend = emitapi.Local{}
)

// openEmits opens what the command reads, as the other log commands do.
func (f *logFlags) openEmits(ctx context.Context) (emitsBackend, func(), error) {
	b, done, err := f.openBackend(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	switch b := b.(type) {
	case logapi.Client:
		return emitapi.Client{NC: b.NC, Subjects: b.Subjects, Timeout: b.Timeout, Denials: b.Denials}, done, nil
	case logapi.Local:
		subjects, err := bus.NewSubjects(f.prefix)
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("--prefix: %w", err)
		}
		return emitapi.Local{Log: b.Log, Subjects: subjects}, done, nil
	}
	done()
	return nil, nil, fmt.Errorf("log emits: cannot read emits from %T", b)
}

func newLogEmitsCmd() *cobra.Command {
	var (
		f      logFlags
		after  string
		types  string
		follow bool
		poll   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "emits [STREAM]",
		Short: "Print what agents emitted, from the log, after a position, and optionally follow",
		Long: `Print the signals agents emitted on their emit subjects
(<prefix>.emit.<agent-id>.<type>), read from the log: those of STREAM (an
agent's, agent/<id>), or of every agent in log order without it. Each has
its position: in a stream SEQ.INDEX, the sequence of the decision that
emitted it and its index there (the Jido-Seq and Jido-Emit-Index headers
of the live message); across the log GSEQ.INDEX (Jido-Global-Seq). --after
takes such a position, or a sequence (after everything at it), and prints
what follows it; at the end it says on stderr where to continue.

This is how a subscriber that was away catches up: subscribe to
<prefix>.emit.<agent-id>.> first, read what follows the last position it
processed here, then take the live messages, dropping those at or before
the last position read. STATUS is published when the log records that NATS
took the emit, unconfirmed while it does not yet (it is being published,
or will be again by the node's recovery); an emit that failed, or was
dropped because the agent stopped first, is not printed: no subscriber got
it. Lifecycle signals (jido.agent.*) are not decisions' emits, and are not
printed.

With -f it keeps printing new emits as they are committed until
interrupted, polling every --poll, through the node or the data directory;
through a node it outlives the node's restarts and goes on after the last
emit it printed.`,
		Example: `  jido-bus log emits agent/c1
  jido-bus log emits agent/c1 --after 12.0 -f
  jido-bus log emits --type 'counter.*' -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, err := runtime.ParseEmitCursor(after)
			if err != nil {
				return fmt.Errorf("--after: %w", err)
			}
			if follow && poll <= 0 {
				return fmt.Errorf("--poll %s: want a positive duration such as 250ms", poll)
			}
			req := runtime.EmitsRequest{After: from, Types: types}
			if len(args) == 1 {
				req.Stream = args[0]
			}
			ctx := cmd.Context()
			var stderr io.Writer = cmd.ErrOrStderr()
			if follow {
				stderr = &syncWriter{w: stderr}
				f.follower = stderr
			}
			b, done, err := f.openEmits(ctx)
			if err != nil {
				return err
			}
			defer done()
			p := &emitPrinter{w: cmd.OutOrStdout(), asJSON: f.json, lines: follow, emits: []runtime.Emitted{}}
			page := func(r runtime.EmitsPage) error {
				warnDamaged(stderr, r.Damaged)
				for _, e := range r.Emits {
					if err := p.print(e); err != nil {
						return err
					}
				}
				return p.flush()
			}
			if follow {
				return followEmits(ctx, b, req, poll, page)
			}
			next, err := readEmitPages(ctx, b, req, page)
			if err != nil {
				return err
			}
			if err := p.finish(next); err != nil {
				return err
			}
			if !f.json {
				fmt.Fprintf(stderr, "jido-bus: continue after this with --after %s\n", next)
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"emits":[`+emittedShape+`…],"next":"<position>"}:
next is the --after that continues. With -f it prints one emit per line
instead (JSON lines), as each is committed.`)
	cmd.Flags().StringVar(&after, "after", "0", "print what follows this position: SEQ.INDEX, or SEQ for after everything at SEQ (0: from the start)")
	cmd.Flags().StringVar(&types, "type", "", "only emits whose type matches this pattern")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new emits until interrupted")
	cmd.Flags().DurationVar(&poll, "poll", 250*time.Millisecond, "how often -f looks for new emits")
	return cmd
}

// emittedShape is one emit as 'log emits' prints it in JSON.
const emittedShape = `{"stream","seq","global_seq","index","position","subject","status","event":<CloudEvent>}`

// readEmitPages reads page after page from req.After to the end of what
// is committed, and returns the position after the last one read.
func readEmitPages(ctx context.Context, b emitsBackend, req runtime.EmitsRequest, page func(runtime.EmitsPage) error) (runtime.EmitCursor, error) {
	for {
		r, err := b.Emits(ctx, req)
		if err != nil {
			return req.After, fmt.Errorf("emits of %s after %s: %w", describeStream(req.Stream), req.After, err)
		}
		if err := page(r); err != nil {
			return req.After, err
		}
		req.After = r.Next
		if !r.More {
			return req.After, nil
		}
	}
}

// followEmits reads new emits from req.After until ctx ends, waiting poll
// between reads that found nothing new. Through a node, a read that fails
// because the node is away is asked again after the last emit printed.
func followEmits(ctx context.Context, b emitsBackend, req runtime.EmitsRequest, poll time.Duration, page func(runtime.EmitsPage) error) error {
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	_, remote := b.(emitapi.Client)
	for {
		next, err := readEmitPages(ctx, b, req, page)
		if ctx.Err() != nil {
			return nil
		}
		req.After = next // the pages before a failed one were printed
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

// emitPrinter prints emits as a table, as the list shape (JSON, collected
// until finish) or, for a follower, one JSON emit per line.
type emitPrinter struct {
	w      io.Writer
	asJSON bool
	lines  bool
	tw     *table
	emits  []runtime.Emitted
}

// emitDataWidth is how much of an emit's data a table row shows.
const emitDataWidth = 60

func (p *emitPrinter) print(e runtime.Emitted) error {
	if p.asJSON {
		if p.lines {
			return writeJSON(p.w, e)
		}
		p.emits = append(p.emits, e)
		return nil
	}
	var ev bus.Signal
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		return fmt.Errorf("%s emit %s: %w", e.Stream, e.Position, err)
	}
	if p.tw == nil {
		p.tw = newTable(p.w, "POSITION", "SUBJECT", "ID", "STATUS", "DATA")
	}
	p.tw.row(e.Position, e.Subject, ev.ID(), e.Status, shortData(ev.Data()))
	return nil
}

// shortData is data on one line, cut to emitDataWidth.
func shortData(data []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, data) == nil {
		data = b.Bytes()
	}
	s := string(bytes.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, data))
	if utf8.RuneCountInString(s) <= emitDataWidth {
		return s
	}
	return string([]rune(s)[:emitDataWidth-1]) + "…"
}

func (p *emitPrinter) flush() error {
	if p.tw != nil {
		return p.tw.flush()
	}
	return nil
}

// finish ends a listing: the JSON list with next, or the table.
func (p *emitPrinter) finish(next runtime.EmitCursor) error {
	if p.asJSON {
		return writeList(p.w, "emits", p.emits, next.String())
	}
	return p.flush()
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// newTopCmd is `jido-bus top`: the node's metrics as a terminal view,
// read over NATS from jido.api.ping and jido.api.agent.list.
func newTopCmd() *cobra.Command {
	var o topOptions
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch a running node: agents, queues and rates, refreshed every second",
		Long: `top polls a running node over NATS every --interval (jido.api.ping, and
jido.api.agent.list for the busiest agents) and shows:

  - the node's version, NATS server id and uptime;
  - agents active (in memory), passive (an index entry each), and queued:
    the signals and directives waiting over all active agents;
  - per second and in total since the node started: signals received on
    NATS, rejected, dead letters, control-plane requests (top's own two per
    refresh among them), decisions committed, signals emitted, directive
    executions and the failed ones;
  - the --agents busiest active agents, most queued first (0 leaves them
    out; passive agents have nothing queued).

The first frame's rates are averages since the node started, later ones
cover the last interval. 'jido-bus serve --metrics' exports the same numbers
to Prometheus.

On a terminal top redraws in place until q (or Ctrl-C) is pressed. When its output is not a
terminal it prints one frame after another, separated by a blank line.
--once prints one frame and exits; --json prints a frame as one JSON object
(one per line without --once).`,
		Example: `  jido-bus top
  jido-bus top --interval 5s --agents 20
  jido-bus top --nats-url nats://10.0.0.5:4222 --prefix prod
  jido-bus top --once
  jido-bus top --once --json | jq .rates.received`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.interval <= 0 {
				return fmt.Errorf("--interval %s: want a positive duration such as 1s or 500ms", o.interval)
			}
			if o.agents < 0 {
				return fmt.Errorf("--agents %d: want 0 (no agent list) or more", o.agents)
			}
			out := cmd.OutOrStdout()
			if !o.live.json && isTerminal(out) {
				// The frame says when the node is away; stderr would
				// only scribble over it.
				o.live.follower = io.Discard
			} else {
				o.live.follower = &syncWriter{w: cmd.ErrOrStderr()}
				o.live.followerName = "top"
			}
			if !o.once && !o.live.json && isTerminal(out) && isTerminalReader(cmd.InOrStdin()) {
				restore, err := rawTerminal(cmd.InOrStdin())
				if err != nil {
					return err
				}
				defer restore()
				o.keys = cmd.InOrStdin()
			}
			return runTop(cmd.Context(), out, o)
		},
	}
	o.live.register(cmd)
	documentJSON(cmd, `one frame per line (JSON lines; one line with --once):
{"nats_url","version","server_id","uptime","agents":{"active","passive",
"total","queued"},"totals":{…},"rates":{…},"rate_window_seconds",
"rates_since_start","busiest"?:[{"id","type","status","queue_length",
"version","error_count"}…],"error"?}. totals and rates have the keys
received, rejected, dead_letters, api_requests, commits, emitted,
directives and directives_failed.`)
	cmd.Flags().DurationVar(&o.interval, "interval", time.Second, "time between two refreshes")
	cmd.Flags().IntVar(&o.agents, "agents", 10, "how many of the busiest agents to list (0: none)")
	cmd.Flags().BoolVar(&o.once, "once", false, "print one frame and exit")
	return cmd
}

// topOptions are top's flags.
type topOptions struct {
	live     liveFlags
	interval time.Duration
	agents   int
	once     bool
	// keys, when set, is the terminal top reads its keys from: q (or
	// Ctrl-C, which a raw terminal delivers as a byte) quits.
	keys io.Reader
}

// Terminal control: the screen is redrawn from the top left, each line
// cleared to its end and everything below the frame cleared, so a frame
// replaces the last one without flicker.
const (
	ansiHome        = "\x1b[H"
	ansiClearScreen = "\x1b[2J"
	ansiClearLine   = "\x1b[K"
	ansiClearBelow  = "\x1b[J"
	ansiHideCursor  = "\x1b[?25l"
	ansiShowCursor  = "\x1b[?25h"
)

func runTop(ctx context.Context, out io.Writer, o topOptions) error {
	nc, subjects, err := o.live.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	p := &topPoller{nc: nc, subjects: subjects, req: o.live.requester(nc, subjects), url: o.live.url, agents: o.agents}
	frame, err := p.poll(ctx)
	if err != nil {
		if ctx.Err() != nil && !o.once {
			// Interrupted before the first frame: a follower ends
			// quietly whenever it is stopped.
			return nil
		}
		return err
	}
	if o.once {
		return writeTopFrame(out, frame, o.live.json, false)
	}
	tty := !o.live.json && isTerminal(out)
	if tty {
		if _, err := io.WriteString(out, ansiHideCursor+ansiClearScreen); err != nil {
			return err
		}
		defer func() { _, _ = io.WriteString(out, ansiShowCursor+"\r\n") }()
	}
	var quit <-chan struct{}
	if o.keys != nil {
		quit = watchQuitKeys(o.keys)
	}
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first && !tty && !o.live.json {
			if _, err := io.WriteString(out, "\n"); err != nil {
				return err
			}
		}
		if err := writeTopFrame(out, frame, o.live.json, tty); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-quit:
			return nil
		case <-tick.C:
		}
		if frame, err = p.poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if p.nc.IsClosed() {
				return err
			}
			// The node may be restarting: say so, and keep asking.
			frame = topFrame{URL: p.url, Error: err.Error()}
		}
	}
}

// isTerminal reports whether w is a terminal that understands escapes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// topFrame is one refresh: what --json prints.
type topFrame struct {
	URL      string         `json:"nats_url"`
	Version  string         `json:"version,omitempty"`
	ServerID string         `json:"server_id,omitempty"`
	Uptime   string         `json:"uptime,omitempty"`
	Agents   topAgentCounts `json:"agents"`
	// Totals are running totals since the node started, by topCounters'
	// keys; Rates the same per second over RateWindow seconds, which
	// reach back to the node's start when RatesSinceStart.
	Totals          map[string]uint64  `json:"totals"`
	Rates           map[string]float64 `json:"rates"`
	RateWindow      float64            `json:"rate_window_seconds"`
	RatesSinceStart bool               `json:"rates_since_start"`
	// Busiest are the agents with the most queued, at most --agents.
	Busiest []topAgent `json:"busiest,omitempty"`
	// Error is why this refresh has no numbers (the node did not answer).
	Error string `json:"error,omitempty"`
}

type topAgentCounts struct {
	Active  int `json:"active"`
	Passive int `json:"passive"`
	Total   int `json:"total"`
	Queued  int `json:"queued"`
}

// topAgent is the part of an agent's description (runtime.Info) top shows.
type topAgent struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	QueueLength int    `json:"queue_length"`
	Version     uint64 `json:"version"`
	ErrorCount  int    `json:"error_count"`
}

// topPing is the part of the jido.api.ping reply top reads.
type topPing struct {
	Version          string         `json:"version"`
	ServerID         string         `json:"server_id"`
	Uptime           string         `json:"uptime"`
	UptimeMS         int64          `json:"uptime_ms"`
	Stats            natsbus.Stats  `json:"stats"`
	Counts           runtime.Counts `json:"counts"`
	Commits          uint64         `json:"commits"`
	Emitted          uint64         `json:"emitted"`
	Directives       uint64         `json:"directives"`
	DirectivesFailed uint64         `json:"directives_failed"`
}

// topCounters are the running totals top shows, in the order it shows
// them: the key in a frame's totals and rates, the row's label, and where
// the ping reply has the number.
var topCounters = []struct {
	key, label string
	get        func(topPing) uint64
}{
	{"received", "signals in", func(p topPing) uint64 { return p.Stats.Received }},
	{"rejected", "rejected", func(p topPing) uint64 { return p.Stats.Rejected }},
	{"dead_letters", "dead letters", func(p topPing) uint64 { return p.Stats.DeadLetters }},
	{"api_requests", "api requests", func(p topPing) uint64 { return p.Stats.APIRequests }},
	{"commits", "commits", func(p topPing) uint64 { return p.Commits }},
	{"emitted", "emitted", func(p topPing) uint64 { return p.Emitted }},
	{"directives", "directives", func(p topPing) uint64 { return p.Directives }},
	{"directives_failed", "  failed", func(p topPing) uint64 { return p.DirectivesFailed }},
}

// topSample is one node's running totals at one point of its uptime: what
// rates are computed from.
type topSample struct {
	ServerID string
	Uptime   time.Duration
	Totals   map[string]uint64
}

func (p topPing) sample() topSample {
	s := topSample{ServerID: p.ServerID, Uptime: time.Duration(p.UptimeMS) * time.Millisecond, Totals: make(map[string]uint64, len(topCounters))}
	for _, c := range topCounters {
		s.Totals[c.key] = c.get(p)
	}
	return s
}

// topRates returns the per-second rates of cur's totals since prev, and
// the window they cover. When prev is empty, from another server, or from
// before a restart (the uptime or a total went back), there is nothing to
// subtract: the rates are averages since cur's node started (sinceStart).
func topRates(prev, cur topSample) (rates map[string]float64, window time.Duration, sinceStart bool) {
	base := prev
	if prev.Totals == nil || prev.ServerID != cur.ServerID || prev.Uptime >= cur.Uptime {
		base = topSample{}
	}
	for k, v := range cur.Totals {
		if v < base.Totals[k] {
			base = topSample{}
			break
		}
	}
	window = cur.Uptime - base.Uptime
	rates = make(map[string]float64, len(cur.Totals))
	for k, v := range cur.Totals {
		if window > 0 {
			rates[k] = float64(v-base.Totals[k]) / window.Seconds()
		} else {
			rates[k] = 0
		}
	}
	return rates, window, base.Totals == nil
}

// topPoller asks one node for frames over one connection, remembering the
// last sample for the rates.
type topPoller struct {
	nc       *nats.Conn
	subjects bus.Subjects
	req      natsbus.Requester
	url      string
	agents   int
	prev     topSample
}

func (p *topPoller) poll(ctx context.Context) (topFrame, error) {
	var ping topPing
	if err := p.request(ctx, p.subjects.Ping(), nil, &ping); err != nil {
		return topFrame{}, err
	}
	cur := ping.sample()
	rates, window, sinceStart := topRates(p.prev, cur)
	p.prev = cur
	f := topFrame{
		URL:      p.url,
		Version:  ping.Version,
		ServerID: ping.ServerID,
		Uptime:   ping.Uptime,
		Agents: topAgentCounts{
			Active:  ping.Counts.Active,
			Passive: ping.Counts.Passive,
			Total:   ping.Counts.Active + ping.Counts.Passive,
			Queued:  ping.Counts.Queued,
		},
		Totals:          cur.Totals,
		Rates:           rates,
		RateWindow:      window.Seconds(),
		RatesSinceStart: sinceStart,
	}
	if p.agents == 0 {
		return f, nil
	}
	var list struct {
		Agents []topAgent `json:"agents"`
	}
	// Passive agents have nothing queued; skipping them keeps the answer
	// cheap on a node with a million of them.
	req := map[string]any{"sort": "queue", "limit": p.agents, "skip_passive": true}
	if err := p.request(ctx, p.subjects.API("agent", "list"), req, &list); err != nil {
		return topFrame{}, err
	}
	f.Busiest = list.Agents
	if f.Busiest == nil {
		f.Busiest = []topAgent{}
	}
	return f, nil
}

// request sends body (nil: none) to subject and decodes the ok reply into
// out, or returns an error that says what to do.
func (p *topPoller) request(ctx context.Context, subject string, body, out any) error {
	return p.req.Do(ctx, subject, body, out)
}

// writeTopFrame writes f as JSON (one line) or as text; on a terminal
// (tty) the text replaces the last frame on the screen.
func writeTopFrame(out io.Writer, f topFrame, asJSON, tty bool) error {
	if asJSON {
		data, err := json.Marshal(f)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	}
	text := renderTopFrame(f)
	if tty {
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		// "\r\n": a terminal in raw mode (to read q) moves to the next
		// line without returning to its start.
		text = ansiHome + strings.Join(lines, ansiClearLine+"\r\n") + ansiClearLine + ansiClearBelow
	}
	_, err := io.WriteString(out, text)
	return err
}

// renderTopFrame is f as text, 14 lines and one per busiest agent (24 for
// the default ten), so it fits a standard terminal.
func renderTopFrame(f topFrame) string {
	var b bytes.Buffer
	if f.Error != "" {
		fmt.Fprintf(&b, "jido-bus top · %s · %s\n", f.URL, time.Now().Format(time.TimeOnly))
		fmt.Fprintf(&b, "error: %s\n", f.Error)
		return b.String()
	}
	fmt.Fprintf(&b, "jido-bus %s · server %s · up %s · %s\n", f.Version, f.ServerID, f.Uptime, f.URL)
	fmt.Fprintf(&b, "agents: %d active, %d passive, %d in all · %d queued\n\n",
		f.Agents.Active, f.Agents.Passive, f.Agents.Total, f.Agents.Queued)
	window := fmt.Sprintf("rates over the last %s", time.Duration(f.RateWindow*float64(time.Second)).Round(time.Millisecond))
	if f.RatesSinceStart {
		window = "rates averaged since the node started"
	}
	fmt.Fprintf(&b, "%-14s %12s %14s   (%s)\n", "", "per second", "total", window)
	for _, c := range topCounters {
		fmt.Fprintf(&b, "%-14s %12.1f %14d\n", c.label, f.Rates[c.key], f.Totals[c.key])
	}
	if f.Busiest == nil {
		return b.String()
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUSIEST\tTYPE\tSTATUS\tQUEUE\tVERSION\tERRORS")
	for _, a := range f.Busiest {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", a.ID, a.Type, a.Status, a.QueueLength, a.Version, a.ErrorCount)
	}
	_ = tw.Flush() // a bytes.Buffer does not fail
	return b.String()
}

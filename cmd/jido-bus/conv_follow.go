package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// convFollower prints a conversation's timeline as it grows. Two sources
// write: the timeline polls (committed items) and the delta subscription
// (the assistant's streamed text, on the connection's goroutine); mu
// keeps their lines apart.
type convFollower struct {
	mu     sync.Mutex
	out    io.Writer
	asJSON bool
	// shown is how each item printed so far was rendered, by position: an
	// item whose rendering changes (a tool call completing) is printed
	// again.
	shown []string
	// inDelta is true while a stream is printing: its text has been
	// printed with no newline after it yet, and no item since.
	inDelta bool
	// deltaCall is the LLM call whose text is printing while inDelta.
	deltaCall string
	// pending holds the deltas of a stream that has not begun printing:
	// the items committed before the stream began (the user's message, a
	// tool call's outcome) may not have been printed yet, and are printed
	// first, so that streamed text is never cut by the items before it.
	pending []string
	// pendingCall is the LLM call the pending deltas belong to, and
	// pendingSince when the first of them came.
	pendingCall  string
	pendingSince time.Time
	// requested maps an LLM call to the stream sequence of its
	// conversation.llm.requested: everything before it is committed by
	// the time its deltas stream, so the timeline folded up to it (an
	// exact fold, not the projection, which may lag) holds what the
	// stream's text must follow.
	requested map[string]uint64
	// kick asks the poll loop to poll at once: a stream began, or its
	// call's position is known.
	kick chan struct{}
	// answerSeq and answerShown are the stream sequence of the last
	// assistant message printed and when it was printed: streamed text of
	// a call answered by then is not printed (the committed message said
	// it already; deltas and the commit race on different publishers).
	answerSeq   uint64
	answerShown time.Time
}

// deltaWait bounds how long deltas wait for their call's llm.requested
// (a follower started in the middle of a stream never sees it).
const deltaWait = time.Second

// delta prints streamed assistant text of LLM call call as it comes.
func (c *convFollower) delta(call, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered(call, time.Now()) {
		return
	}
	if c.inDelta && call != c.deltaCall {
		// Another call streams while the last one's message is not
		// printed yet (the node restarted in between, say): its line
		// ends here, and the new text waits for the items before it.
		c.endDelta()
	}
	if !c.inDelta {
		if len(c.pending) == 0 {
			c.pendingCall, c.pendingSince = call, time.Now()
		}
		c.pending = append(c.pending, text)
		c.kickPoll()
		return
	}
	c.printDelta(call, text)
}

// requestedAt records where LLM call call was requested.
func (c *convFollower) requestedAt(call string, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requested == nil {
		c.requested = map[string]uint64{}
	}
	c.requested[call] = seq
	if len(c.pending) > 0 && c.pendingCall == call {
		c.kickPoll()
	}
}

func (c *convFollower) kickPoll() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// pendingAt says whether the held deltas may be printed after the next
// poll, and up to which stream sequence that poll folds the timeline (0:
// the projection as it stands).
func (c *convFollower) pendingAt() (seq uint64, ready bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return 0, false
	}
	if seq, ok := c.requested[c.pendingCall]; ok {
		return seq, true
	}
	return 0, time.Since(c.pendingSince) >= deltaWait
}

// answered says whether the message LLM call call streams has been
// printed already; c.mu is held. Where the call was requested is known
// unless the follower started in the middle of its stream: then any
// answer printed after its first delta (since) is taken for it.
func (c *convFollower) answered(call string, since time.Time) bool {
	if seq, ok := c.requested[call]; ok {
		return c.answerSeq > seq
	}
	return !c.answerShown.IsZero() && !c.answerShown.Before(since)
}

// endDelta ends the line of the text streamed so far; c.mu is held.
func (c *convFollower) endDelta() {
	if c.inDelta && !c.asJSON {
		// A JSON line ends itself.
		fmt.Fprintln(c.out)
	}
	c.inDelta = false
}

// printDelta prints one delta of LLM call call; c.mu is held.
func (c *convFollower) printDelta(call, text string) {
	c.deltaCall = call
	if c.asJSON {
		_ = writeJSON(c.out, map[string]string{"kind": "delta", "text": text})
		c.inDelta = true
		return
	}
	if text == "" {
		return
	}
	fmt.Fprint(c.out, text)
	c.inDelta = true
}

// flushPending prints the deltas held back: the timeline has been polled
// after they arrived, so everything committed before their stream began is
// printed.
func (c *convFollower) flushPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered(c.pendingCall, c.pendingSince) {
		c.pending = nil
		return
	}
	for _, text := range c.pending {
		c.printDelta(c.pendingCall, text)
	}
	c.pending = nil
}

// timeline prints the items not printed yet and those that changed.
func (c *convFollower) timeline(items []views.TimelineItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, it := range items {
		line := renderItem(it, c.asJSON)
		if i < len(c.shown) && c.shown[i] == line {
			continue
		}
		// The committed message follows the text streamed before it: the
		// streamed line ends here.
		c.endDelta()
		fmt.Fprint(c.out, line)
		if it.Kind == views.ItemAssistant && it.Seq > c.answerSeq {
			c.answerSeq, c.answerShown = it.Seq, time.Now()
		}
		if i < len(c.shown) {
			c.shown[i] = line
		} else {
			c.shown = append(c.shown, line)
		}
	}
}

// runConvFollow follows conversation key until ctx ends, across restarts
// of the node: the connection reconnects for ever (saying so on stderr)
// and the timeline is asked again until the node answers.
func runConvFollow(cmd *cobra.Command, f *liveFlags, key string, every time.Duration) error {
	if err := conversation.CheckKey(key); err != nil {
		return err
	}
	if every <= 0 {
		return fmt.Errorf("--every %s: want a positive duration such as 250ms", every)
	}
	f.follower, f.followerName = &syncWriter{w: cmd.ErrOrStderr()}, "conv follow"
	nc, subjects, err := f.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	c := &convFollower{out: cmd.OutOrStdout(), asJSON: f.json, kick: make(chan struct{}, 1)}
	deltas, err := nc.Subscribe(subjects.Emit(key, conversation.AssistantDelta), func(m *nats.Msg) {
		var (
			d    conversation.Data
			call string
			data = m.Data // a plain publish: the text only
		)
		if sig, _, err := (&codec.Decoder{}).Decode(m, conversation.AssistantDelta); err == nil {
			data = sig.Data()
			call, _ = sig.Extensions()[bus.ExtCausationID].(string)
		}
		if json.Unmarshal(data, &d) == nil {
			c.delta(call, d.Text)
		}
	})
	if err != nil {
		return err
	}
	defer func() { _ = deltas.Unsubscribe() }()
	requested, err := nc.Subscribe(subjects.Emit(key, conversation.LLMRequested), func(m *nats.Msg) {
		sig, _, err := (&codec.Decoder{}).Decode(m, "")
		if seq, perr := strconv.ParseUint(m.Header.Get(convapi.HeaderSeq), 10, 64); err == nil && perr == nil {
			c.requestedAt(sig.ID(), seq)
		}
	})
	if err != nil {
		return err
	}
	defer func() { _ = requested.Unsubscribe() }()
	client := convapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout}
	tick := time.NewTicker(every)
	defer tick.Stop()
	ctx := cmd.Context()
	// answered: the node has answered once. Until then a node that is not
	// there (or a wrong --prefix) fails at once, exit 4, as top and log
	// tail -f do; after that, its absence is a restart to outlive.
	waiting, answered := false, false
	for {
		// Deltas that arrived before this poll began follow what it
		// returns, once it holds everything committed before their
		// call; later ones kick another poll.
		at, streamed := c.pendingAt()
		reply, err := client.Show(ctx, convapi.ShowRequest{Conv: key, View: views.ViewTimeline, Seq: at})
		switch {
		case err == nil:
			answered = true
			var tl views.Timeline
			if err := json.Unmarshal(reply.State, &tl); err != nil {
				return fmt.Errorf("timeline of %s: %w", key, err)
			}
			c.timeline(tl.Items)
		case ctx.Err() != nil:
			return nil
		case bus.ErrorType(err) == bus.ReasonNotFound:
			// Not started yet: it may be (conv send starts it), so wait,
			// but say so once, for a mistyped id.
			answered = true
			if !waiting {
				fmt.Fprintf(f.follower, "jido-bus conv follow: no conversation %s yet; waiting for it to start ('jido-bus conv ls' lists the conversations)\n", key)
				waiting = true
			}
		case !answered:
			return err
		case transient(err):
			// The node is away: ask again.
		default:
			return err
		}
		if streamed {
			// Printed even when the poll failed: text is held back one
			// poll at most.
			c.flushPending()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-c.kick:
		}
	}
}

// renderItem is one timeline item as printed: a JSON line, or
// "seq kind text" (a tool call as name, state and outcome).
func renderItem(it views.TimelineItem, asJSON bool) string {
	if asJSON {
		b, _ := json.Marshal(it)
		return string(b) + "\n"
	}
	text := it.Text
	switch {
	case it.Tool != nil:
		text = renderTool(it.Tool)
	case it.Error != nil:
		text = it.Error.Type + ": " + it.Error.Message
	}
	return fmt.Sprintf("%4d  %-20s %s\n", it.Seq, it.Kind, text)
}

// renderTool is a tool call on one line: its name and arguments, its
// state and, once it has one, its outcome.
func renderTool(t *views.ToolCall) string {
	s := t.Name
	if len(t.Args) > 0 {
		s += " " + compactJSON(t.Args)
	}
	s += " [" + t.State + "]"
	switch {
	case t.Error != nil:
		s += " " + t.Error.Type + ": " + t.Error.Message
	case t.Reason != "":
		s += " " + t.Reason
	case len(t.Output) > 0:
		out := compactJSON(t.Output)
		if len(out) > 200 {
			out = out[:200] + "…"
		}
		s += " -> " + out
	}
	return s
}

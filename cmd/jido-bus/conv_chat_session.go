package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// chatSession is one conv chat: it reads lines, sends them, and prints
// the conversation's events until each turn ends.
//
// What it prints comes from two sources, in stream order, each committed
// event once: the events the node publishes live (each with its stream
// sequence, Jido-Seq), and the timeline read from the node, for what was
// before (a resumed conversation's history) or what the live feed missed
// (the node restarted; its events of the outage were published to
// nobody). Until the two have met — a timeline read up to just before the
// first live event, or a timeline read while the conversation is quiet —
// the session is not synced and holds the live events back.
type chatSession struct {
	r          requester
	subjects   bus.Subjects
	key        string
	by         string    // recorded as who answered approvals
	out        io.Writer // the conversation
	info       io.Writer // the session's own notes
	interrupts <-chan os.Signal
	prompt     bool // print "> " before reading a line (a terminal)
	// conn brings the connection's news (lost, back) as the line to say.
	conn <-chan connNews

	view   chatView
	events chan liveMsg
	lines  chan string // closed at the end of the input
	// epoch is the connection's count of reconnects the session has
	// synced for: a message received on a later connection may follow a
	// gap (what the node published while the session was away).
	epoch      uint64
	reconnects func() uint64

	shown   uint64      // the last committed event printed, by its seq
	synced  bool        // live events follow what is printed, without a gap
	held    []chatEvent // live events that came while not synced
	filled  []string    // answers printed from the timeline since the last sync
	said    bool        // a failure to read the timeline was said once
	retried bool        // the last model call failed and is made again

	mine     map[string]bool // ids of the user messages this session sent
	unseen   []string        // texts it sent whose event has not come yet
	inTurn   bool            // a turn is on: the prompt waits for its end
	ownTurn  bool            // this session's message began it (else it was taken up)
	turnSeen bool            // the turn's own message has been seen
	cancel   bool            // the turn was cancelled by Ctrl-C
	asking   bool            // waiting[0]'s question is printed
	waiting  []chatData      // approvals asked, oldest first
	prompted bool            // "> " is on the screen, waiting for a line
}

// liveMsg is a message of the conversation's subscription and the
// connection's count of reconnects when it was read: a message read after
// a reconnect is known to be one, whichever the session hears of first.
type liveMsg struct {
	msg   *nats.Msg
	epoch uint64
}

// connNews is what the connection's handlers tell the session.
type connNews struct {
	back bool   // reconnected (else lost)
	say  string // the line to print
}

// errLeave ends a session on the user's wish: not an error.
var errLeave = errors.New("leave")

// chatSyncEvery is how often a session that is not synced reads the
// timeline again.
const chatSyncEvery = 250 * time.Millisecond

// run follows the conversation's events and reads in until its end (or
// the user leaves). A Ctrl-C that leaves is exit 130, as for any command
// Ctrl-C ends, without a word: the user knows.
func (s *chatSession) run(ctx context.Context, nc *nats.Conn, in io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := nc.SubscribeSync(s.subjects.Emit(s.key, ">"))
	if err != nil {
		return fmt.Errorf("follow %s: %w", s.key, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	// A long answer's deltas must not be dropped as a slow consumer's.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return err
	}
	if err := nc.Flush(); err != nil { // subscribed before anything is read or sent
		return fmt.Errorf("follow %s: %w", s.key, err)
	}
	s.reconnects = func() uint64 { return nc.Stats().Reconnects }
	s.epoch = s.reconnects()
	s.events = make(chan liveMsg)
	go func() {
		for {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				return
			}
			select {
			case s.events <- liveMsg{msg: m, epoch: s.reconnects()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	s.lines = make(chan string)
	go s.read(ctx, in)
	s.mine = map[string]bool{}
	err = s.loop(ctx)
	if s.view.open || s.prompted {
		fmt.Fprintln(s.out) // the shell's prompt on a line of its own
	}
	if errors.Is(err, errLeave) {
		return exitError{code: exitInterrupted, err: errLeave, quiet: true}
	}
	return err
}

func (s *chatSession) read(ctx context.Context, in io.Reader) {
	defer close(s.lines)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		select {
		case s.lines <- sc.Text():
		case <-ctx.Done():
			return
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(s.info, "input: %v\n", err)
	}
}

// loop reads lines and runs their turns until the input ends or the user
// leaves.
func (s *chatSession) loop(ctx context.Context) error {
	tick := time.NewTicker(chatSyncEvery)
	defer tick.Stop()
	s.sync(ctx)
	for {
		if s.lines == nil && (!s.inTurn || !s.ownTurn) {
			// The input ended (during the last turn). A turn this
			// session did not begin is not waited for, nor its
			// questions answered for somebody else.
			return nil
		}
		if s.inTurn && !s.asking && len(s.waiting) > 0 {
			if s.lines == nil {
				// The input has ended: nobody is left to ask.
				s.answer(ctx, s.waiting[0], "", false)
				s.waiting = s.waiting[1:]
				continue
			}
			s.write(s.view.endLine() + approvalQuestion(s.waiting[0]))
			s.asking = true
		}
		if !s.inTurn && s.prompt && !s.prompted {
			s.write(s.view.endLine() + "> ")
			s.prompted = true
		}
		var lines <-chan string
		if !s.inTurn || s.asking {
			lines = s.lines
		}
		var sync <-chan time.Time
		if !s.synced {
			sync = tick.C
		}
		select {
		case line, ok := <-lines:
			if ok {
				s.prompted = false // the line's Enter ended the prompt's line
			} else {
				s.lines = nil
				if s.asking && !s.ownTurn {
					s.write("\n") // the question's line
					continue      // left unanswered: the loop leaves
				}
			}
			if s.asking {
				s.answer(ctx, s.waiting[0], line, ok)
				s.waiting, s.asking = s.waiting[1:], false
				continue
			}
			if ok && strings.TrimSpace(line) != "" {
				if err := s.send(ctx, line); err != nil {
					return err
				}
			}
		case m := <-s.events:
			if m.epoch > s.epoch {
				s.resync(m.epoch)
			}
			if ev, ok := s.decode(m.msg); ok {
				s.receive(ctx, ev)
			}
		case news := <-s.conn:
			s.write(s.view.endLine())
			fmt.Fprintln(s.info, news.say)
			if e := s.reconnects(); news.back && e > s.epoch {
				s.resync(e)
				s.sync(ctx)
			}
		case <-sync:
			s.sync(ctx)
		case <-s.interrupts:
			if !s.inTurn || !s.ownTurn || s.cancel {
				return errLeave // at the prompt, or in a turn this session did not begin
			}
			s.cancel = true
			s.write(s.view.endLine())
			fmt.Fprintln(s.info, "cancelling the turn; Ctrl-C again leaves")
			if _, err := s.r.Request(ctx, s.subjects.API("conv", "cancel"), map[string]string{"conv": s.key, "reason": "interrupted by the user"}); err != nil {
				fmt.Fprintf(s.info, "conv cancel %s: %v\n", s.key, err)
			}
		}
	}
}

// send sends line as the user's message and begins its turn.
func (s *chatSession) send(ctx context.Context, line string) error {
	data, err := s.r.Request(ctx, s.subjects.API("conv", "send"), map[string]string{"conv": s.key, "text": line})
	if err != nil {
		return fmt.Errorf("conv send %s: %w", s.key, err)
	}
	var reply struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &reply) == nil && reply.ID != "" {
		s.mine[reply.ID] = true
	}
	s.unseen = append(s.unseen, line)
	s.inTurn, s.ownTurn, s.turnSeen, s.cancel = true, true, false, false
	return nil
}

// write prints to the conversation's output; something printed while the
// prompt waits (another client's turn) goes below it, and the prompt is
// printed again after it.
func (s *chatSession) write(text string) {
	if text == "" {
		return
	}
	if s.prompted {
		text = "\n" + text
		s.prompted = false
	}
	fmt.Fprint(s.out, text)
}

// decode reads a published event.
func (s *chatSession) decode(m *nats.Msg) (chatEvent, bool) {
	sig, _, err := (&codec.Decoder{}).Decode(m, "")
	if err != nil {
		return chatEvent{}, false
	}
	ev := chatEvent{typ: sig.Type(), id: sig.ID()}
	if len(sig.Data()) > 0 && json.Unmarshal(sig.Data(), &ev.data) != nil {
		return chatEvent{}, false
	}
	if seq := m.Header.Get(convapi.HeaderSeq); seq != "" {
		ev.seq, _ = strconv.ParseUint(seq, 10, 64)
	}
	ev.request, _ = sig.Extensions()[bus.ExtCausationID].(string)
	ev.mine = ev.typ == conversation.UserMessage && s.mine[ev.id]
	return ev, true
}

// resync begins a sync for connection epoch: what the node published
// while the session was away is read from the timeline, and the live
// events wait for it.
func (s *chatSession) resync(epoch uint64) {
	s.epoch, s.synced, s.filled = epoch, false, nil
}

// receive handles a live event: held while not synced, else shown.
func (s *chatSession) receive(ctx context.Context, ev chatEvent) {
	if !s.synced {
		s.held = append(s.held, ev)
		if ev.seq > 0 && s.firstHeld() == ev.seq {
			// The first numbered live event: the timeline up to just
			// before it closes the gap.
			s.sync(ctx)
		}
		return
	}
	s.show(ev)
}

// firstHeld is the seq of the first numbered event held, or 0.
func (s *chatSession) firstHeld() uint64 {
	for _, ev := range s.held {
		if ev.seq > 0 {
			return ev.seq
		}
	}
	return 0
}

// show prints ev unless it was printed already, and follows the turn.
func (s *chatSession) show(ev chatEvent) {
	if ev.seq > 0 {
		if ev.seq <= s.shown {
			return
		}
		s.shown = ev.seq
	}
	if ev.typ == conversation.UserMessage && !ev.mine && len(s.unseen) > 0 && s.unseen[0] == ev.data.Text {
		ev.mine = true // sent by this session (read back from the timeline, or its id unknown)
	}
	if ev.typ == conversation.UserMessage && ev.mine && len(s.unseen) > 0 {
		s.unseen = s.unseen[1:]
		s.turnSeen = true
	}
	if ev.mine && !s.prompt {
		// Read from a pipe: nothing echoed the line, and the transcript
		// shows it as any other message.
		ev.mine = false
	}
	if ev.history && ev.typ == conversation.AssistantMessage {
		s.filled = append(s.filled, ev.data.Text)
	}
	s.write(s.view.render(ev))
	switch ev.typ {
	case conversation.ToolApprovalRequested:
		s.waiting = append(s.waiting, ev.data)
	case conversation.ToolApproval:
		for i, w := range s.waiting {
			if w.CallID == ev.data.CallID {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				if i == 0 && s.asking {
					s.asking = false // answered elsewhere
				}
				break
			}
		}
	case conversation.LLMFailed:
		s.retried = !turnEnds(ev)
	case conversation.AssistantMessage:
		s.retried = false
	}
	if s.inTurn && turnEnds(ev) && !ev.history {
		s.inTurn = false
	}
	if ev.typ == conversation.Stopped && !ev.history {
		s.lines = nil // nothing more can be said to it
	}
}

// sync reads the timeline up to where the live events begin (or up to
// the conversation's last event, when it is quiet) and prints what was not
// printed; once the two meet, the held events follow. A node that cannot
// be asked now (restarting) is asked again at the next tick.
func (s *chatSession) sync(ctx context.Context) {
	var st views.Status
	err := s.showView(ctx, views.ViewStatus, 0, &st)
	switch {
	case bus.ErrorType(err) == bus.ReasonNotFound:
		st = views.Status{State: views.StateIdle} // nothing committed yet
	case err != nil && transient(err):
		return
	case err != nil:
		if !s.said {
			fmt.Fprintf(s.info, "cannot read the history of %s (%v): showing what comes from now on\n", s.key, err)
			s.said = true
		}
		s.release()
		return
	}
	target := st.LastSeq
	if first := s.firstHeld(); first > 0 {
		target = max(target, first-1)
	}
	if target > s.shown {
		var tl views.Timeline
		if err := s.showView(ctx, views.ViewTimeline, target, &tl); err != nil {
			if !transient(err) && !s.said {
				fmt.Fprintf(s.info, "cannot read the history of %s (%v)\n", s.key, err)
				s.said = true
			}
			return
		}
		for _, ev := range historyEvents(tl.Items) {
			s.show(ev)
		}
		s.shown = max(s.shown, target)
	}
	// Quiet: nothing is in flight, so nothing more will be published
	// until somebody acts; a call waiting for a person is quiet too, but
	// its turn goes on.
	caughtUp := !s.retried && st.LastSeq <= s.shown
	ended := caughtUp && (st.State == views.StateIdle || st.State == views.StateCompleted ||
		st.State == views.StateCancelled || st.State == views.StateFailed)
	quiet := ended || caughtUp && st.State == views.StateAwaitingApproval
	if s.firstHeld() == 0 && !quiet {
		if !s.inTurn && !ended && s.shown > 0 {
			s.takeUp()
		}
		return // more is coming: live, or in the timeline at the next tick
	}
	switch {
	case ended && s.inTurn && s.turnSeen:
		s.inTurn = false // the turn ended among what the live feed missed
	case !ended && !s.inTurn && st.State != "":
		s.takeUp()
	}
	s.release()
}

// takeUp waits for a turn in progress when the session begins (another
// client's, or this user's before conv chat was started again) before
// the prompt, saying so: Ctrl-C then leaves rather than cancel it.
func (s *chatSession) takeUp() {
	s.inTurn, s.ownTurn, s.turnSeen = true, false, true
	s.write(s.view.endLine())
	fmt.Fprintln(s.info, "(a turn is in progress: its end is waited for; Ctrl-C leaves)")
}

// release ends the sync: the held events are shown, but deltas of an
// answer the timeline printed already.
func (s *chatSession) release() {
	s.synced = true
	held := s.held
	s.held = nil
	streamed := map[string]string{}
	for _, ev := range held {
		if ev.typ == conversation.AssistantDelta {
			streamed[ev.request] += ev.data.Text
		}
	}
	for _, ev := range held {
		if ev.typ == conversation.AssistantDelta && s.printedFromTimeline(streamed[ev.request]) {
			continue
		}
		s.show(ev)
	}
	s.filled = nil
}

// printedFromTimeline reports whether text is the beginning of an answer
// the timeline printed since the last sync.
func (s *chatSession) printedFromTimeline(text string) bool {
	for _, f := range s.filled {
		if text != "" && strings.HasPrefix(f, text) {
			return true
		}
	}
	return false
}

// showView reads one read model of the conversation (at seq, when not
// 0: folded from the log up to that entry, exactly) into v.
func (s *chatSession) showView(ctx context.Context, view string, seq uint64, v any) error {
	data, err := s.r.Request(ctx, s.subjects.API(convapi.Area, convapi.VerbShow), convapi.ShowRequest{Conv: s.key, View: view, Seq: seq})
	if err != nil {
		return err
	}
	var reply convapi.ShowReply
	if err := json.Unmarshal(data, &reply); err != nil {
		return fmt.Errorf("conv show %s: %w", s.key, err)
	}
	return json.Unmarshal(reply.State, v)
}

// answer sends the decision line gives for the call awaiting approval.
func (s *chatSession) answer(ctx context.Context, call chatData, line string, ok bool) {
	body := map[string]string{"conv": s.key, "call_id": call.CallID, "decision": "deny", "by": s.by}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		body["decision"] = "approve"
	case "a", "always":
		body["decision"], body["remember"] = "approve", "conversation"
	default:
		if !ok {
			body["reason"] = "no answer: the input ended"
		}
	}
	if _, err := s.r.Request(ctx, s.subjects.API("conv", "approve"), body); err != nil {
		fmt.Fprintf(s.info, "conv %s %s %s: %v\n", body["decision"], s.key, call.CallID, err)
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/projections/conversation"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
)

func newConvChatCmd() *cobra.Command {
	var (
		f    liveFlags
		opts convStartOptions
	)
	cmd := &cobra.Command{
		Use:   "chat PROJECT [CONV]",
		Short: "Talk to a project's assistant in the terminal",
		Long: `Chat is an interactive session with a conversation of the open project
PROJECT: it starts a new conversation unless CONV (its id, or
<project>/<conversation>) is given. Each line read is sent as a user
message (conv send); the answer streams as it comes, tool calls and their
results are shown on a line each (→ read_file {"path":"a.go"}, ← ok 1.2 KB),
and a tool call the project's policy asks about is asked inline:
y approves, a approves the tool for the rest of the conversation, anything
else denies. The next line is read once the turn has ended.

Ctrl-D leaves. Ctrl-C during a turn cancels it (conv cancel); a second
Ctrl-C, or one between turns, leaves. Lines may come from a pipe or a file
as well as a terminal: the session then ends after the last line's turn.

--provider, --model and --system apply to the
conversation it starts, as for conv start.`,
		Example: `  jido-bus conv chat demo
  printf 'what does main.go do?\n' | jido-bus conv chat demo c1`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.json {
				return errors.New("conv chat talks with a person and prints no JSON: for a program, use conv send, and conv follow -o json to read the answers")
			}
			key := ""
			if len(args) == 2 {
				var err error
				if key, err = chatKey(args[0], args[1]); err != nil {
					return err
				}
			}
			nc, subjects, err := f.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			// The first Ctrl-C cancels the command's context (main); the
			// session answers Ctrl-C itself, so its requests go on.
			ctx := context.WithoutCancel(cmd.Context())
			r := f.requester(nc, subjects)
			if key == "" {
				body := opts.body(args[0])
				info, err := startConversation(ctx, r, subjects, body)
				if err != nil {
					return err
				}
				key = info.ID
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt)
			defer signal.Stop(sigs)
			s := &chatSession{r: r, subjects: subjects, key: key, by: f.cliUser(),
				out: cmd.OutOrStdout(), info: cmd.ErrOrStderr(), interrupts: sigs, prompt: readsTerminal(cmd.InOrStdin())}
			return s.run(ctx, nc, cmd.InOrStdin())
		},
	}
	f.register(cmd)
	// A chat prints for a person only: the output flags stay parsed (to
	// refuse them with what to use instead) but are not offered.
	_ = cmd.Flags().MarkHidden("output")
	_ = cmd.Flags().MarkHidden("json")
	opts.register(cmd, false)
	return cmd
}

// chatKey is the conversation key of chat's PROJECT and CONV arguments.
func chatKey(project, conv string) (string, error) {
	key := project + "/" + conv
	if strings.Contains(conv, "/") {
		if !strings.HasPrefix(conv, project+"/") {
			return "", fmt.Errorf("CONV %q is not a conversation of project %s: give its id, or %s/<id>", conv, project, project)
		}
		key = conv
	}
	return key, conversation.CheckKey(key)
}

// readsTerminal reports whether in is a terminal (a person typing, who
// wants a prompt).
func readsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// chatSession is one conv chat: it reads lines, sends them, and prints the
// conversation's published events until each turn ends.
type chatSession struct {
	r          requester
	subjects   bus.Subjects
	key        string
	by         string    // recorded as who answered approvals
	out        io.Writer // the conversation
	info       io.Writer // the session's own notes
	interrupts <-chan os.Signal
	prompt     bool // print "> " before reading a line (a terminal)

	view   chatView
	events chan *nats.Msg
	lines  chan string // closed at the end of the input
}

// errLeave ends a session on the user's wish: not an error.
var errLeave = errors.New("leave")

// run follows the conversation's events and reads in until its end (or
// the user leaves).
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
	if err := nc.Flush(); err != nil { // subscribed before anything is sent
		return fmt.Errorf("follow %s: %w", s.key, err)
	}
	s.events = make(chan *nats.Msg)
	go func() {
		for {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				return
			}
			select {
			case s.events <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	s.lines = make(chan string)
	go s.read(ctx, in)
	fmt.Fprintf(s.info, "conversation %s; Ctrl-D leaves, Ctrl-C cancels a turn\n", s.key)
	err = s.loop(ctx)
	if errors.Is(err, errLeave) {
		return nil
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

// loop reads a line and runs its turn, until the input ends.
func (s *chatSession) loop(ctx context.Context) error {
	for {
		if s.lines == nil {
			return nil // the input ended during the last turn
		}
		if s.prompt {
			fmt.Fprint(s.out, "> ")
		}
		var line string
	wait:
		for {
			select {
			case l, ok := <-s.lines:
				if !ok {
					return nil
				}
				line = l
				break wait
			case <-s.interrupts:
				return errLeave
			case m := <-s.events:
				// Another client's turn: shown as it goes.
				if typ, _, ok := s.decode(m); ok && typ == convevent.Stopped {
					return nil
				}
			}
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if _, err := s.r.Request(ctx, s.subjects.API("conv", "send"), map[string]string{"conv": s.key, "text": line}); err != nil {
			return fmt.Errorf("conv send %s: %w", s.key, err)
		}
		stopped, err := s.turn(ctx)
		if err != nil || stopped {
			return err
		}
	}
}

// decode prints m's event and returns its type and data.
func (s *chatSession) decode(m *nats.Msg) (string, chatData, bool) {
	ev, _, err := (&codec.Decoder{}).Decode(m, "")
	if err != nil {
		return "", chatData{}, false
	}
	var d chatData
	if len(ev.Data()) > 0 && json.Unmarshal(ev.Data(), &d) != nil {
		return "", chatData{}, false
	}
	fmt.Fprint(s.out, s.view.render(ev.Type(), d))
	return ev.Type(), d, true
}

// turn prints the conversation's events until the turn ends, asking for
// each approval in turn. It reports whether the conversation stopped.
func (s *chatSession) turn(ctx context.Context) (stopped bool, err error) {
	var waiting []chatData // approvals asked by the conversation, oldest first
	asking := false        // waiting[0]'s question is printed
	cancelled := false
	for {
		if !asking && len(waiting) > 0 && s.lines == nil {
			// The input has ended: nobody is left to ask.
			if err := s.answer(ctx, waiting[0], "", false); err != nil {
				fmt.Fprintf(s.info, "%v\n", err)
			}
			waiting = waiting[1:]
			continue
		}
		if !asking && len(waiting) > 0 {
			fmt.Fprint(s.out, approvalQuestion(waiting[0]))
			asking = true
		}
		var lines <-chan string
		if asking {
			lines = s.lines
		}
		select {
		case m := <-s.events:
			typ, d, ok := s.decode(m)
			if !ok {
				continue
			}
			switch typ {
			case convevent.ToolApprovalRequested:
				waiting = append(waiting, d)
			case convevent.ToolApproval:
				for i, w := range waiting {
					if w.CallID == d.CallID {
						waiting = append(waiting[:i], waiting[i+1:]...)
						if i == 0 && asking {
							asking = false // answered elsewhere
						}
						break
					}
				}
			}
			if turnEnds(typ, d) {
				return typ == convevent.Stopped, nil
			}
		case line, ok := <-lines:
			if !ok {
				s.lines = nil // the input has ended: every question left is denied
			}
			if err := s.answer(ctx, waiting[0], line, ok); err != nil {
				fmt.Fprintf(s.info, "%v\n", err)
			}
			waiting, asking = waiting[1:], false
		case <-s.interrupts:
			if cancelled {
				return false, errLeave
			}
			cancelled = true
			fmt.Fprintln(s.info, "cancelling the turn; Ctrl-C again leaves")
			if _, err := s.r.Request(ctx, s.subjects.API("conv", "cancel"), map[string]string{"conv": s.key, "reason": "interrupted by the user"}); err != nil {
				fmt.Fprintf(s.info, "conv cancel %s: %v\n", s.key, err)
			}
		}
	}
}

// answer sends the decision line gives for the call awaiting approval.
func (s *chatSession) answer(ctx context.Context, call chatData, line string, ok bool) error {
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
		return fmt.Errorf("conv %s %s %s: %w", body["decision"], s.key, call.CallID, err)
	}
	return nil
}

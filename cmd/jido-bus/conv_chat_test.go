package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// fakeConvNode answers conv.send, conv.approve and conv.cancel as a node
// would, publishing the events a scripted turn would: the chat session is
// tested against what it sees on NATS, without a model.
type fakeConvNode struct {
	t   *testing.T
	nc  *nats.Conn
	sub bus.Subjects
	mu  sync.Mutex
	got []string // "verb body" of each request, in order
	// onSend publishes the turn of a sent message.
	onSend func(text string)
	// approved receives each approve request's body.
	approved chan map[string]string
	// onCancel, when set, publishes the cancel.
	onCancel bool
}

func (f *fakeConvNode) publish(typ, data string) {
	f.t.Helper()
	s, err := bus.NewSignal(typ, "/conversation/p1/c1", json.RawMessage(data))
	if err != nil {
		f.t.Error(err)
		return
	}
	msg, err := codec.Encode(f.sub.Emit("p1/c1", typ), &s, codec.Binary)
	if err != nil {
		f.t.Error(err)
		return
	}
	if err := f.nc.PublishMsg(msg); err != nil {
		f.t.Error(err)
	}
}

func startFakeConvNode(t *testing.T) (*fakeConvNode, *nats.Conn) {
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	subjects, _ := bus.NewSubjects("")
	f := &fakeConvNode{t: t, nc: nc, sub: subjects, approved: make(chan map[string]string, 4)}
	b := natsbus.New(nc, natsbus.Options{Subjects: subjects})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	handle := func(verb string, fn func(map[string]string)) {
		if err := b.HandleAPI(subjects.API("conv", verb), func(_ context.Context, req []byte) (any, error) {
			var body map[string]string
			if err := json.Unmarshal(req, &body); err != nil {
				return nil, err
			}
			f.mu.Lock()
			f.got = append(f.got, verb+" "+string(req))
			f.mu.Unlock()
			go fn(body)
			return map[string]any{"id": "x", "conv": "p1/c1", "version": 1}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// conv show: a conversation with nothing committed the session has
	// not seen (the fake publishes its events without Jido-Seq).
	if err := b.HandleAPI(subjects.API("conv", "show"), func(_ context.Context, req []byte) (any, error) {
		var body struct{ View string }
		if err := json.Unmarshal(req, &body); err != nil {
			return nil, err
		}
		state := `{"items":[]}`
		if body.View == "status" {
			state = `{"state":"idle","pending_tools":[],"last_seq":0}`
		}
		return map[string]any{"conv": "p1/c1", "view": body.View, "state": json.RawMessage(state)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	handle("send", func(b map[string]string) { f.onSend(b["text"]) })
	handle("approve", func(b map[string]string) { f.approved <- b })
	handle("cancel", func(b map[string]string) {
		if f.onCancel {
			f.publish("conversation.cancel", `{"reason":"`+b["reason"]+`"}`)
		}
	})
	client := natstest.Connect(t, srv)
	return f, client
}

func (f *fakeConvNode) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// runChat runs a session on lines of input and returns what it printed.
func runChat(t *testing.T, nc *nats.Conn, input string, interrupts chan os.Signal) (string, error) {
	t.Helper()
	return runChatFrom(t, nc, strings.NewReader(input), interrupts)
}

// runChatFrom runs a session reading in.
func runChatFrom(t *testing.T, nc *nats.Conn, in io.Reader, interrupts chan os.Signal) (string, error) {
	t.Helper()
	subjects, _ := bus.NewSubjects("")
	var out, info strings.Builder
	s := &chatSession{r: natsbus.Requester{NC: nc, Subjects: subjects, Timeout: 10 * time.Second}, subjects: subjects,
		key: "p1/c1", by: "ana", out: &out, info: &info, interrupts: interrupts}
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), nc, in) }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(20 * time.Second):
		t.Fatalf("the session did not end; it printed:\n%s\n%s", out.String(), info.String())
		return "", nil
	}
}

// TestChatTurnWithApproval: a line is sent; the answer streams, the tool
// call is shown, its approval asked and answered from the next line of
// input (a), and the session reads on only once the turn has ended; the
// end of the input leaves without error.
func TestChatTurnWithApproval(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f, nc := startFakeConvNode(t)
	f.onSend = func(text string) {
		if text != "edit a.go" {
			f.publish("conversation.assistant.message", `{"text":"unexpected `+text+`","tool_calls":0}`)
			return
		}
		f.publish("conversation.user.message", `{"text":"edit a.go"}`)
		f.publish("conversation.assistant.delta", `{"text":"On "}`)
		f.publish("conversation.assistant.delta", `{"text":"it."}`)
		f.publish("conversation.tool.requested", `{"call_id":"k1","name":"write_file","args":{"path":"a.go"}}`)
		f.publish("conversation.assistant.message", `{"text":"On it.","tool_calls":1}`)
		f.publish("conversation.tool.approval.requested", `{"call_id":"k1","name":"write_file","args":{"path":"a.go"},"reason":"policy: ask","timeout_ms":300000}`)
		b := <-f.approved
		f.publish("conversation.tool.approval", `{"call_id":"k1","decision":"`+b["decision"]+`","by":"`+b["by"]+`"}`)
		f.publish("conversation.tool.completed", `{"call_id":"k1","output":"written"}`)
		f.publish("conversation.assistant.message", `{"text":"Done.","tool_calls":0}`)
	}
	out, err := runChat(t, nc, "edit a.go\na\n\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Read from a pipe, the user's line is shown as the transcript's.
	want := "> edit a.go\nOn it.\n→ write_file {\"path\":\"a.go\"}\napprove write_file {\"path\":\"a.go\"} (policy: ask; denied unless answered within 5m0s)? [y/N/a(lways)] ✓ approved: by ana\n← ok 9 B\nDone.\n"
	if out != want {
		t.Fatalf("printed:\n%q\nwant:\n%q", out, want)
	}
	reqs := f.requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1], `"decision":"approve"`) || !strings.Contains(reqs[1], `"remember":"conversation"`) || !strings.Contains(reqs[1], `"by":"ana"`) {
		t.Fatalf("requests %v", reqs)
	}
}

// TestChatInputEndsDuringApproval: no line left to answer a question is
// a deny, said so, and the session ends after the turn.
func TestChatInputEndsDuringApproval(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f, nc := startFakeConvNode(t)
	f.onSend = func(string) {
		f.publish("conversation.tool.approval.requested", `{"call_id":"k1","name":"run_command","args":{"cmd":"rm -rf /"}}`)
		b := <-f.approved
		f.publish("conversation.tool.approval", `{"call_id":"k1","decision":"`+b["decision"]+`"}`)
		f.publish("conversation.assistant.message", `{"text":"Denied, fine.","tool_calls":0}`)
	}
	out, err := runChat(t, nc, "clean up\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "✗ denied") || !strings.HasSuffix(out, "Denied, fine.\n") {
		t.Fatalf("printed:\n%s", out)
	}
	if reqs := f.requests(); len(reqs) != 2 || !strings.Contains(reqs[1], `"decision":"deny"`) || !strings.Contains(reqs[1], "input ended") {
		t.Fatalf("requests %v", reqs)
	}
}

// TestChatInterrupts: Ctrl-C during a turn sends conv cancel, and the
// cancel ends the turn; a second Ctrl-C during a turn that does not end
// leaves with exit code 130, and so does one at the prompt, with nothing
// more said (the user knows).
func TestChatInterrupts(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f, nc := startFakeConvNode(t)
	interrupts := make(chan os.Signal, 2)
	f.onCancel = true
	f.onSend = func(string) {
		f.publish("conversation.assistant.delta", `{"text":"thinking"}`)
		interrupts <- os.Interrupt // the user, seeing it start
	}
	out, err := runChat(t, nc, "long task\n", interrupts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "thinking\n(cancelled: interrupted by the user)\n") {
		t.Fatalf("printed:\n%q", out)
	}
	if reqs := f.requests(); len(reqs) != 2 || !strings.HasPrefix(reqs[1], "cancel ") {
		t.Fatalf("requests %v", reqs)
	}

	f.onCancel = false // a node that never ends the turn
	f.onSend = func(string) {
		interrupts <- os.Interrupt
		interrupts <- os.Interrupt
	}
	_, err = runChat(t, nc, "again\nnever read\n", interrupts)
	if ee, ok := errors.AsType[exitError](err); !ok || ee.code != exitInterrupted || !ee.quiet {
		t.Fatalf("leaving with a second Ctrl-C: %v, want exit %d, quietly", err, exitInterrupted)
	}
	if reqs := f.requests(); len(reqs) != 4 || !strings.HasPrefix(reqs[3], "cancel ") {
		t.Fatalf("requests %v", reqs)
	}

	// At the prompt: the input is a terminal that has not said anything.
	interrupts <- os.Interrupt
	pr, pw := io.Pipe()
	defer pw.Close()
	_, err = runChatFrom(t, nc, pr, interrupts)
	if ee, ok := errors.AsType[exitError](err); !ok || ee.code != exitInterrupted {
		t.Fatalf("Ctrl-C at the prompt: %v, want exit %d", err, exitInterrupted)
	}
}

// TestChatPrintsAnAnswerOnce: an answer whose deltas all came before its
// call's llm.requested (committed, so published after them by the log's
// follower) is printed once; conv chat printed it twice (4 turns in 10 in
// tmux), the late llm.requested making it forget what had streamed.
func TestChatPrintsAnAnswerOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f, nc := startFakeConvNode(t)
	f.onSend = func(string) {
		f.publish("conversation.assistant.delta", `{"text":"A short "}`)
		f.publish("conversation.assistant.delta", `{"text":"answer."}`)
		f.publish("conversation.llm.requested", `{"model":"m","attempt":1,"step":1}`)
		f.publish("conversation.assistant.message", `{"text":"A short answer.","tool_calls":0}`)
	}
	out, err := runChat(t, nc, "hi\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out != "A short answer.\n" {
		t.Fatalf("printed %q, want the answer once", out)
	}
}

// TestChatRefusesStartOptionsForAConversationTakenUp: --model, --provider,
// --system, --mode, --max-tokens and --max-cost set up a conversation chat
// starts; with CONV or --last they were ignored without a word (a
// conversation taken up with --mode plan went on writing).
func TestChatRefusesStartOptionsForAConversationTakenUp(t *testing.T) {
	for _, args := range [][]string{{"demo", "c1", "--model", "m"}, {"demo", "--last", "--system", "be brief"}, {"demo", "c1", "--provider", "openai"},
		{"demo", "c1", "--mode", "plan"}, {"demo", "--last", "--mode", "ask"}, {"demo", "c1", "--max-tokens", "10"}, {"demo", "--last", "--max-cost", "1"}} {
		out, err := runRoot(t, append([]string{"conv", "chat"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "applies to a conversation conv chat starts") {
			t.Errorf("conv chat %v: %v\n%s", args, err, out)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// loggedConv is a conversation as a node holds it, for a chat session to
// read: its timeline and status as conv show answers them (the timeline
// folded up to the seq asked), and a way to publish an event as the node
// does, with Jido-Seq.
type loggedConv struct {
	t    *testing.T
	mu   sync.Mutex
	tl   []views.TimelineItem
	last uint64
	idle bool
	// awaiting: a tool call waits for a person's approval.
	awaiting bool
	nc       *nats.Conn
	sub      bus.Subjects
}

func (c *loggedConv) commit(item views.TimelineItem, idle bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tl = append(c.tl, item)
	c.last, c.idle = item.Seq, idle
}

func (c *loggedConv) show(_ context.Context, req []byte) (any, error) {
	var r struct {
		View string
		Seq  uint64
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var state any
	switch r.View {
	case views.ViewStatus:
		st := views.Status{State: views.StateAwaitingLLM, LastSeq: c.last, PendingTools: []views.PendingTool{}}
		switch {
		case c.idle:
			st.State = views.StateIdle
		case c.awaiting:
			st.State = views.StateAwaitingApproval
		}
		state = st
	default:
		items := []views.TimelineItem{}
		for _, it := range c.tl {
			if r.Seq == 0 || it.Seq <= r.Seq {
				items = append(items, it)
			}
		}
		state = views.Timeline{Items: items}
	}
	return map[string]any{"conv": "p1/c1", "view": r.View, "state": state}, nil
}

// publish sends an event as the node does: seq 0 is a delta, with no
// Jido-Seq; request is its causation id.
func (c *loggedConv) publish(seq uint64, typ, request, data string) {
	c.t.Helper()
	c.publishID(seq, typ, "", request, data)
}

// publishID is publish of an event with id (a new one when "").
func (c *loggedConv) publishID(seq uint64, typ, id, request, data string) {
	c.t.Helper()
	s, err := bus.NewSignal(typ, "/conversation/p1/c1", json.RawMessage(data))
	if err != nil {
		c.t.Fatal(err)
	}
	if id != "" {
		s.SetID(id)
	}
	if request != "" {
		s.SetExtension(bus.ExtCausationID, request)
	}
	msg, err := codec.Encode(c.sub.Emit("p1/c1", typ), &s, codec.Binary)
	if err != nil {
		c.t.Fatal(err)
	}
	if seq > 0 {
		msg.Header.Set(convapi.HeaderSeq, strconv.FormatUint(seq, 10))
	}
	if err := c.nc.PublishMsg(msg); err != nil {
		c.t.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// TestChatShowsWhatARestartHid: the node restarts in the middle of an
// answer; what it committed while the session was away (the interrupted
// call, closed at its restart) was published to nobody. The session reads
// it from the timeline once it is back, then follows live: the cut text,
// the interruption, the answer asked again, each once. conv chat showed
// neither the interruption nor the start of the new answer (lost with the
// connection), gluing the new answer's end to the cut text.
func TestChatShowsWhatARestartHid(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()
	onPort := func(o *natsserver.Options) { o.Port = port }
	srv := natstest.RunServer(t, onPort)
	again := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(20 * time.Millisecond)}
	nodeConn := natstest.Connect(t, srv, again...)
	subjects, _ := bus.NewSubjects("")
	conv := &loggedConv{t: t, nc: nodeConn, sub: subjects, idle: true}
	conv.commit(views.TimelineItem{Seq: 2, Kind: views.ItemStarted}, true)
	b := natsbus.New(nodeConn, natsbus.Options{Subjects: subjects})
	// Closed before the second server's cleanup shuts it down (a bus
	// closing on a lost connection waits for its flush to time out).
	defer func() { _ = b.Shutdown(context.Background()) }()
	sent := make(chan struct{}, 1)
	for verb, h := range map[string]natsbus.APIFunc{
		"show": conv.show,
		"send": func(context.Context, []byte) (any, error) {
			sent <- struct{}{}
			return map[string]any{"id": "u1", "conv": "p1/c1", "version": 2}, nil
		},
	} {
		if err := b.HandleAPI(subjects.API("conv", verb), h); err != nil {
			t.Fatal(err)
		}
	}

	client := natstest.Connect(t, srv, again...)
	in, typing := io.Pipe()
	var out, info testkit.Buffer
	s := &chatSession{r: natsbus.Requester{NC: client, Subjects: subjects, Timeout: 5 * time.Second}, subjects: subjects,
		key: "p1/c1", out: &out, info: &info, conn: make(chan connNews)}
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), client, in) }()
	if _, err := io.WriteString(typing, "hi\n"); err != nil {
		t.Fatal(err)
	}
	<-sent
	conv.commit(views.TimelineItem{Seq: 4, Kind: views.ItemUser, Text: "hi"}, false)
	conv.publish(4, "conversation.user.message", "u1", `{"text":"hi"}`)
	conv.publish(0, "conversation.assistant.delta", "r1", `{"text":"Half an"}`)
	testkit.Eventually(t, "the streamed text", func() bool { return strings.Contains(out.String(), "Half an") })

	// The restart: the node closes the call as interrupted and asks again
	// while the session is away.
	_ = srv.Close()
	conv.commit(views.TimelineItem{Seq: 8, Kind: views.ItemLLMError, Error: &bus.Error{Type: "interrupted", Message: "LLM call r1 did not finish: the node stopped"}}, false)
	natstest.RunServer(t, onPort) // on the same port; shut down when the test ends
	testkit.Eventually(t, "both connections back", func() bool {
		return client.IsConnected() && nodeConn.IsConnected() && client.Stats().Reconnects > 0 && nodeConn.Stats().Reconnects > 0
	})
	if err := client.Flush(); err != nil { // its subscription is the server's again
		t.Fatal(err)
	}
	conv.publish(0, "conversation.assistant.delta", "r2", `{"text":"A whole "}`)
	conv.publish(0, "conversation.assistant.delta", "r2", `{"text":"answer."}`)
	conv.commit(views.TimelineItem{Seq: 12, Kind: views.ItemAssistant, Text: "A whole answer."}, true)
	conv.publish(12, "conversation.assistant.message", "r2", `{"text":"A whole answer.","tool_calls":0}`)
	_ = typing.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the session did not end; it printed:\n%s\n%s", out.String(), info.String())
	}
	want := "> hi\nHalf an\n(the answer was interrupted: LLM call r1 did not finish: the node stopped; asking the model again)\nA whole answer.\n"
	if out.String() != want {
		t.Fatalf("printed:\n%q\nwant:\n%q", out.String(), want)
	}
}

// TestChatTakesUpAPendingApproval: a conversation taken up while a tool
// call waits for a person shows its history, then asks the question at
// once (the first line answers it, not a new message), and waits for the
// turn to end before the prompt.
func TestChatTakesUpAPendingApproval(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := natstest.RunServer(t)
	nodeConn := natstest.Connect(t, srv)
	subjects, _ := bus.NewSubjects("")
	conv := &loggedConv{t: t, nc: nodeConn, sub: subjects}
	args := json.RawMessage(`{"path":"a.txt"}`)
	conv.commit(views.TimelineItem{Seq: 2, Kind: views.ItemStarted}, false)
	conv.commit(views.TimelineItem{Seq: 4, Kind: views.ItemUser, Text: "write a.txt"}, false)
	conv.commit(views.TimelineItem{Seq: 10, Kind: views.ItemToolCall, Tool: &views.ToolCall{CallID: "w1", Name: "write_file", Args: args, State: views.ToolAwaitingApproval}}, false)
	conv.commit(views.TimelineItem{Seq: 16, Kind: views.ItemApproval, Approval: &views.ApprovalItem{CallID: "w1", Name: "write_file", Args: args, TimeoutMS: 60000}}, false)
	conv.mu.Lock()
	conv.awaiting = true
	conv.mu.Unlock()
	b := natsbus.New(nodeConn, natsbus.Options{Subjects: subjects})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	approved := make(chan map[string]string, 1)
	for verb, h := range map[string]natsbus.APIFunc{
		"show": conv.show,
		"approve": func(_ context.Context, req []byte) (any, error) {
			var body map[string]string
			if err := json.Unmarshal(req, &body); err != nil {
				return nil, err
			}
			approved <- body
			return map[string]any{"ok": true}, nil
		},
	} {
		if err := b.HandleAPI(subjects.API("conv", verb), h); err != nil {
			t.Fatal(err)
		}
	}
	client := natstest.Connect(t, srv)
	in, typing := io.Pipe()
	var out, info testkit.Buffer
	s := &chatSession{r: natsbus.Requester{NC: client, Subjects: subjects, Timeout: 5 * time.Second}, subjects: subjects,
		key: "p1/c1", by: "ana", out: &out, info: &info}
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), client, in) }()
	testkit.Eventually(t, "the question", func() bool { return strings.Contains(out.String(), "? [y/N/a(lways)] ") })
	if _, err := io.WriteString(typing, "y\n"); err != nil {
		t.Fatal(err)
	}
	if body := <-approved; body["call_id"] != "w1" || body["decision"] != "approve" {
		t.Fatalf("the first line answered %v, want w1 approved", body)
	}
	conv.publish(18, "conversation.tool.approval", "", `{"call_id":"w1","decision":"approve","by":"ana"}`)
	conv.publish(22, "conversation.tool.completed", "", `{"call_id":"w1","output":"ok"}`)
	conv.publish(30, "conversation.assistant.message", "r2", `{"text":"Written.","tool_calls":0}`)
	_ = typing.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the session did not end; it printed:\n%s\n%s", out.String(), info.String())
	}
	want := "> write a.txt\n→ write_file {\"path\":\"a.txt\"}\napprove write_file {\"path\":\"a.txt\"} (denied unless answered within 1m0s)? [y/N/a(lways)] ✓ approved: by ana\n← ok 4 B\nWritten.\n"
	if out.String() != want {
		t.Fatalf("printed:\n%q\nwant:\n%q", out.String(), want)
	}
}

// TestChatLeavesATurnItDidNotBegin: input that ends at once leaves a
// conversation taken up in the middle of somebody's turn without waiting
// for it (a conversation driven from outside may never answer) and
// without denying the approval it waits for on that somebody's behalf.
func TestChatLeavesATurnItDidNotBegin(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := natstest.RunServer(t)
	nodeConn := natstest.Connect(t, srv)
	subjects, _ := bus.NewSubjects("")
	conv := &loggedConv{t: t, nc: nodeConn, sub: subjects, awaiting: true}
	args := json.RawMessage(`{"path":"a.txt"}`)
	conv.commit(views.TimelineItem{Seq: 4, Kind: views.ItemUser, Text: "write a.txt"}, false)
	conv.commit(views.TimelineItem{Seq: 16, Kind: views.ItemApproval, Approval: &views.ApprovalItem{CallID: "w1", Name: "write_file", Args: args}}, false)
	b := natsbus.New(nodeConn, natsbus.Options{Subjects: subjects})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	answered := make(chan string, 1)
	if err := b.HandleAPI(subjects.API("conv", "show"), conv.show); err != nil {
		t.Fatal(err)
	}
	if err := b.HandleAPI(subjects.API("conv", "approve"), func(_ context.Context, req []byte) (any, error) {
		answered <- string(req)
		return map[string]any{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	client := natstest.Connect(t, srv)
	var out, info testkit.Buffer
	s := &chatSession{r: natsbus.Requester{NC: client, Subjects: subjects, Timeout: 5 * time.Second}, subjects: subjects,
		key: "p1/c1", out: &out, info: &info}
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), client, strings.NewReader("")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the session waits for a turn it did not begin; it printed:\n%s\n%s", out.String(), info.String())
	}
	select {
	case req := <-answered:
		t.Errorf("the session answered somebody's approval: %s", req)
	default:
	}
	if !strings.Contains(out.String(), "> write a.txt") || !strings.Contains(info.String(), "a turn is in progress") {
		t.Errorf("printed:\n%s\n%s", out.String(), info.String())
	}
}

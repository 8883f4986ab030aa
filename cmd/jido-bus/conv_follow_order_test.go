package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestConvFollowPrintsWhatCameBeforeAStream: an answer's text streams
// after everything committed before its LLM call (a tool call's outcome
// above all), though the timeline projection may not have folded that
// yet: the deltas wait for the timeline folded exactly up to their call's
// llm.requested. conv follow printed the next answer's text before the
// tool call's completed line when the projection lagged (make test's
// TestCLIAuditConvFollow failed about one run in three).
func TestConvFollowPrintsWhatCameBeforeAStream(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := natstest.RunServer(t)
	nodeConn := natstest.Connect(t, srv)
	subjects, _ := bus.NewSubjects("")
	conv := &loggedConv{t: t, nc: nodeConn, sub: subjects}
	args := json.RawMessage(`{"dir":"."}`)
	requested := views.ToolCall{CallID: "t1", Name: "ls", Args: args, State: views.ToolRequested}
	completed := requested
	completed.State, completed.Output, completed.ResultSeq = views.ToolCompleted, json.RawMessage(`"a.go"`), 8
	lagging := []views.TimelineItem{{Seq: 4, Kind: views.ItemUser, Text: "list"}, {Seq: 6, Kind: views.ItemToolCall, Tool: &requested}}
	exact := []views.TimelineItem{lagging[0], {Seq: 6, Kind: views.ItemToolCall, Tool: &completed}}
	b := natsbus.New(nodeConn, natsbus.Options{Subjects: subjects})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	// The projection lags at the tool call requested; the log, folded up
	// to the call's llm.requested at seq 10, has it completed.
	if err := b.HandleAPI(subjects.API("conv", "show"), func(_ context.Context, req []byte) (any, error) {
		var r struct{ Seq uint64 }
		if err := json.Unmarshal(req, &r); err != nil {
			return nil, err
		}
		items := lagging
		if r.Seq >= 10 {
			items = exact
		}
		return map[string]any{"conv": "p1/c1", "view": "timeline", "state": views.Timeline{Items: items}}, nil
	}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut testkit.Buffer
	done := make(chan error, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs([]string{"conv", "follow", "p1/c1", "--every", "20ms", "--nats-url", srv.ClientURL()})
		done <- root.ExecuteContext(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("conv follow: %v\n%s", err, errOut.String())
		}
	}()
	testkit.Eventually(t, "the tool call requested", func() bool { return strings.Contains(out.String(), "[requested]") })
	conv.publish(0, "conversation.assistant.delta", "r2", `{"text":"one file"}`)
	conv.publishID(10, "conversation.llm.requested", "r2", "u1", `{"model":"m"}`) // published after the delta, as the node may
	testkit.Eventually(t, "the streamed text", func() bool { return strings.Contains(out.String(), "one file") })
	got := out.String()
	if done, text := strings.Index(got, "[completed]"), strings.Index(got, "one file"); done < 0 || done > text {
		t.Errorf("the text streamed before the tool call's outcome committed ahead of it:\n%s", got)
	}
}

// TestConvFollowDropsTextOfAnAnswerAlreadyPrinted: the deltas of an
// answer and its commit race on different publishers, so a poll may print
// the committed message before the deltas are let through. Printed after
// it, the text repeated the answer with no newline, and the next stream
// ran on from it ("a.txt is written.Back "; make test's
// TestCLIAuditConvFollow failed so in CI).
func TestConvFollowDropsTextOfAnAnswerAlreadyPrinted(t *testing.T) {
	var out strings.Builder
	c := &convFollower{out: &out, kick: make(chan struct{}, 1)}
	user := views.TimelineItem{Seq: 20, Kind: views.ItemUser, Text: "write a"}
	answer := views.TimelineItem{Seq: 24, Kind: views.ItemAssistant, Text: "a.txt is written."}
	c.timeline([]views.TimelineItem{user})
	c.delta("r1", "a.txt is written.")
	c.timeline([]views.TimelineItem{user, answer}) // a tick's poll: the projection has the answer
	c.requestedAt("r1", 22)
	if _, ready := c.pendingAt(); !ready {
		t.Fatal("the held deltas are not let through once their call's position is known")
	}
	c.flushPending()
	c.delta("r1", " late") // a delta of the answered call that came later still
	c.delta("r2", "Back ")
	want := "  20  user                 write a\n  24  assistant            a.txt is written.\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if len(c.pending) != 1 || c.pending[0] != "Back " || c.pendingCall != "r2" {
		t.Errorf("the next stream's text is not held for its own call: %q of %q", c.pending, c.pendingCall)
	}

	// A follower that never saw the call requested (it started in the
	// middle of the stream) takes an answer printed after the first
	// delta for the stream's.
	out.Reset()
	c = &convFollower{out: &out, kick: make(chan struct{}, 1)}
	c.delta("r3", "Hello")
	c.timeline([]views.TimelineItem{{Seq: 30, Kind: views.ItemAssistant, Text: "Hello"}})
	c.flushPending()
	if strings.Count(out.String(), "Hello") != 1 {
		t.Errorf("the answer printed twice: %q", out.String())
	}
}

// TestConvFollowEndsAStreamAnotherCallInterrupts: the text of a call
// whose message is not printed yet (the node stopped before the poll that
// would print it) was run on by the next call's text on the same line
// ("a.txt is written.Back after the restart.", make test's
// TestCLIAuditConvFollow in CI); the new text now waits for the items
// before it, the answer of the first call among them.
func TestConvFollowEndsAStreamAnotherCallInterrupts(t *testing.T) {
	var out strings.Builder
	c := &convFollower{out: &out, kick: make(chan struct{}, 1)}
	c.requestedAt("r1", 20)
	c.delta("r1", "a.txt is written.")
	c.flushPending()
	c.requestedAt("r2", 30)
	c.delta("r2", "Back ")
	if seq, ready := c.pendingAt(); !ready || seq != 30 {
		t.Fatalf("the next call's text is not held for a poll up to its llm.requested: at %d, ready %v", seq, ready)
	}
	c.timeline([]views.TimelineItem{{Seq: 24, Kind: views.ItemAssistant, Text: "a.txt is written."}, {Seq: 28, Kind: views.ItemUser, Text: "again"}})
	c.flushPending()
	c.delta("r2", "after the restart.")
	want := "a.txt is written.\n  24  assistant            a.txt is written.\n  28  user                 again\nBack after the restart."
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

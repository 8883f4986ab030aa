package node

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestConvEventsArePublishedAfterCommit: a conv send's committed events
// (conversation.started, conversation.user.message) come out on
// jido.emit.<key>.<type> as CloudEvents with the stream and the stream
// sequence the log gave them; the runtime's own entries of the stream
// (jido.*) do not.
func TestConvEventsArePublishedAfterCommit(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("jido.emit.p1/c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	startOutsideDriven(t, n, "p1/c1")
	reply, err := n.convSend(context.Background(), []byte(`{"conv":"p1/c1","text":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	sentID := reply.(convapi.Reply).ID

	want := map[string]uint64{} // id → seq, from the log
	var wantTypes []string
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		want[e.Event.ID()] = e.Seq
		wantTypes = append(wantTypes, e.Event.Type())
	}
	if len(wantTypes) != 2 || wantTypes[1] != conversation.UserMessage {
		t.Fatalf("log holds %v, want started and the user message", wantTypes)
	}
	dec := codec.Decoder{}
	next := func(wait time.Duration) (*nats.Msg, error) {
		for {
			msg, err := sub.NextMsg(wait)
			// The runtime's lifecycle emits (jido.agent.started) share
			// the subject space; they carry no Jido-Seq.
			if err != nil || !strings.HasPrefix(msg.Subject, "jido.emit.p1/c1.jido.") {
				return msg, err
			}
			if msg.Header.Get(convapi.HeaderSeq) != "" {
				t.Fatalf("%s carries Jido-Seq", msg.Subject)
			}
		}
	}
	for i, typ := range wantTypes {
		msg, err := next(10 * time.Second)
		if err != nil {
			t.Fatalf("message %d (%s): %v", i, typ, err)
		}
		if msg.Subject != "jido.emit.p1/c1."+typ {
			t.Fatalf("message %d on %s, want jido.emit.p1/c1.%s", i, msg.Subject, typ)
		}
		ev, _, err := dec.Decode(msg, "")
		if err != nil {
			t.Fatalf("message %d is no CloudEvent: %v", i, err)
		}
		if got := msg.Header.Get(convapi.HeaderSeq); got != strconv.FormatUint(want[ev.ID()], 10) {
			t.Fatalf("%s %s: Jido-Seq %q, want %d", typ, ev.ID(), got, want[ev.ID()])
		}
		if got := msg.Header.Get(convapi.HeaderStream); got != "conversation/p1/c1" {
			t.Fatalf("Jido-Stream %q", got)
		}
		if typ == conversation.UserMessage && ev.ID() != sentID {
			t.Fatalf("user message published with id %s, sent %s", ev.ID(), sentID)
		}
	}
	if msg, err := next(100 * time.Millisecond); err == nil {
		t.Fatalf("unexpected message %s %v", msg.Subject, msg.Header)
	}
}

// TestConvCatchUpSwitchOver is the client's recipe, with messages
// arriving all along: subscribe to jido.emit.<key>.>, read the log's
// conversation events up to seq N, then take the live messages with
// Jido-Seq > N. The result is every conversation event of the stream,
// once each, in order.
func TestConvCatchUpSwitchOver(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	const total = 150
	halfway := make(chan struct{})
	sent := make(chan error, 1)
	startOutsideDriven(t, n, "p1/c1")
	go func() {
		for i := range total {
			if _, err := n.convSend(ctx, fmt.Appendf(nil, `{"conv":"p1/c1","text":"m%d"}`, i)); err != nil {
				sent <- err
				return
			}
			if i == total/3 {
				close(halfway)
			}
		}
		sent <- nil
	}()
	<-halfway

	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	live, err := nc.SubscribeSync("jido.emit.p1/c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil { // the server has the subscription
		t.Fatal(err)
	}
	var seen []uint64
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e.Seq)
	}
	if len(seen) == 0 {
		t.Fatal("nothing in the log at the switch-over")
	}
	last := seen[len(seen)-1]
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	var all []uint64
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e.Seq)
	}
	end := all[len(all)-1]
	dropped := 0
	for last < end {
		msg, err := live.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("live after seq %d of %d: %v", last, end, err)
		}
		if msg.Header.Get(convapi.HeaderSeq) == "" {
			continue // no log entry: a delta, or the runtime's lifecycle emit
		}
		seq, err := strconv.ParseUint(msg.Header.Get(convapi.HeaderSeq), 10, 64)
		if err != nil {
			t.Fatalf("%s: Jido-Seq %q: %v", msg.Subject, msg.Header.Get(convapi.HeaderSeq), err)
		}
		if seq <= last {
			dropped++
			continue
		}
		seen = append(seen, seq)
		last = seq
	}
	if fmt.Sprint(seen) != fmt.Sprint(all) {
		t.Fatalf("log then live gave %v\nthe log holds %v", seen, all)
	}
	t.Logf("%d events; %d live messages dropped as already read", len(all), dropped)
}

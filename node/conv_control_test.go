package node

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// apiCall asks the node over NATS, as a client does, and returns the
// reply's members or its error's type and message.
func apiCall(t *testing.T, nc *nats.Conn, subject, body string) (map[string]any, *bus.Error) {
	t.Helper()
	msg, err := nc.Request(subject, []byte(body), 10*time.Second)
	if err != nil {
		t.Fatalf("%s %s: %v", subject, body, err)
	}
	var reply struct {
		Error *bus.Error `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		t.Fatalf("%s: reply %q: %v", subject, msg.Data, err)
	}
	if reply.Error != nil {
		return nil, reply.Error
	}
	var ok map[string]any
	if err := json.Unmarshal(msg.Data, &ok); err != nil {
		t.Fatal(err)
	}
	return ok, nil
}

func convTypes(t *testing.T, n *Node, key string) []string {
	t.Helper()
	var types []string
	for e, err := range n.Log().ReadStream("conversation/"+key, eventlog.ReadOptions{Types: "conversation.**"}) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Event.Type())
	}
	return types
}

func nodeConn(t *testing.T, n *Node) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestConvCancel: jido.api.conv.cancel appends conversation.cancel with
// the reason given and answers id, conv and the stream's version; a
// conversation that does not run, bad keys and unknown members are
// refused, with nothing appended.
func TestConvCancel(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	nc := nodeConn(t, n)
	startOutsideDriven(t, n, "p1/c1")
	if _, err := n.convSend(context.Background(), []byte(`{"conv":"p1/c1","text":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	subject := n.subjects.API("conv", "cancel")
	for _, tc := range []struct{ body, want, says string }{
		{`{"conv":"p1/none"}`, bus.ReasonNotFound, "conv send"},
		{`{"conv":"nokey"}`, bus.ReasonInvalidRequest, "nokey"},
		{`{"conv":"p1/c1","why":"x"}`, bus.ReasonInvalidRequest, "why"},
		{`{"conv":"p1/c1","reason":7}`, bus.ReasonInvalidRequest, "reason"},
		{`not json`, bus.ReasonInvalidRequest, "JSON"},
		{`{}`, bus.ReasonInvalidRequest, "conv"},
	} {
		_, e := apiCall(t, nc, subject, tc.body)
		if e == nil || e.Type != tc.want || !strings.Contains(e.Message, tc.says) {
			t.Errorf("cancel %s: %+v, want %s saying %q", tc.body, e, tc.want, tc.says)
		}
	}
	if got := convTypes(t, n, "p1/c1"); len(got) != 2 {
		t.Fatalf("after refusals the stream holds %v", got)
	}
	reply, e := apiCall(t, nc, subject, `{"conv":"p1/c1","reason":"enough"}`)
	if e != nil {
		t.Fatal(e)
	}
	if reply["conv"] != "p1/c1" || reply["id"] == "" || reply["version"] == nil {
		t.Fatalf("reply %v", reply)
	}
	var found bool
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: "conversation.cancel"}) {
		if err != nil {
			t.Fatal(err)
		}
		found = e.Event.ID() == reply["id"] && strings.Contains(string(e.Event.Data()), `"enough"`)
	}
	if !found {
		t.Fatalf("no conversation.cancel %v in the log: %v", reply["id"], convTypes(t, n, "p1/c1"))
	}
}

// TestConvApproveRefusals: jido.api.conv.approve refuses, with nothing
// appended, a call that is not awaiting approval (not_found, saying what
// to look at), a conversation that does not run, and bad members.
func TestConvApproveRefusals(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	nc := nodeConn(t, n)
	startOutsideDriven(t, n, "p1/c1")
	if _, err := n.convSend(context.Background(), []byte(`{"conv":"p1/c1","text":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	subject := n.subjects.API("conv", "approve")
	for _, tc := range []struct{ body, want, says string }{
		{`{"conv":"p1/c1","call_id":"k1","decision":"approve"}`, bus.ReasonNotFound, "not awaiting approval"},
		{`{"conv":"p1/none","call_id":"k1","decision":"approve"}`, bus.ReasonNotFound, "not running"},
		{`{"conv":"p1/c1","call_id":"k1","decision":"yes"}`, bus.ReasonInvalidRequest, "approve or deny"},
		{`{"conv":"p1/c1","call_id":"k1"}`, bus.ReasonInvalidRequest, "approve or deny"},
		{`{"conv":"p1/c1","call_id":"k1","decision":"approve","remember":"forever"}`, bus.ReasonInvalidRequest, "conversation"},
		{`{"conv":"p1/c1","call_id":"k1","decision":"deny","remember":"conversation"}`, bus.ReasonInvalidRequest, "approve"},
		{`{"conv":"p1/c1","decision":"approve"}`, bus.ReasonInvalidRequest, "call_id"},
		{`{"conv":"p1/c1","call_id":"k1","decision":"approve","x":1}`, bus.ReasonInvalidRequest, "x"},
		{`{"call_id":"k1","decision":"approve"}`, bus.ReasonInvalidRequest, "conv"},
	} {
		_, e := apiCall(t, nc, subject, tc.body)
		if e == nil || e.Type != tc.want || !strings.Contains(e.Message, tc.says) {
			t.Errorf("approve %s: %+v, want %s saying %q", tc.body, e, tc.want, tc.says)
		}
	}
	if got := convTypes(t, n, "p1/c1"); len(got) != 2 {
		t.Fatalf("after refusals the stream holds %v", got)
	}
}

// TestConvApprove: a call awaiting approval is answered once; a second
// answer is refused as not awaiting.
func TestConvApprove(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	nc := nodeConn(t, n)
	ctx := context.Background()
	startOutsideDriven(t, n, "p1/c1")
	if _, err := n.convSend(ctx, []byte(`{"conv":"p1/c1","text":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []struct {
		typ  string
		data map[string]any
	}{
		{"conversation.tool.requested", map[string]any{"call_id": "k1", "name": "write_file", "args": map[string]any{}}},
		{conversation.ToolApprovalRequested, map[string]any{"call_id": "k1", "name": "write_file", "args": map[string]any{}, "reason": "ask", "timeout_ms": 60000}},
	} {
		sig, err := bus.NewSignal(ev.typ, "test", ev.data)
		if err != nil {
			t.Fatal(err)
		}
		sig.SetExtension(bus.ExtCausationID, "k1")
		if _, err := n.Runtime().Call(ctx, "p1/c1", sig); err != nil {
			t.Fatal(err)
		}
	}
	subject := n.subjects.API("conv", "approve")
	reply, e := apiCall(t, nc, subject, `{"conv":"p1/c1","call_id":"k1","decision":"approve","remember":"conversation","by":"ana"}`)
	if e != nil {
		t.Fatal(e)
	}
	if reply["id"] != "approval.k1.approve" || reply["conv"] != "p1/c1" {
		t.Fatalf("reply %v", reply)
	}
	if _, e := apiCall(t, nc, subject, `{"conv":"p1/c1","call_id":"k1","decision":"deny"}`); e == nil || e.Type != bus.ReasonNotFound || !strings.Contains(e.Message, "approve") {
		t.Fatalf("second answer: %+v, want not_found naming the first", e)
	}
}

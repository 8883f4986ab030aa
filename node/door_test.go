package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestOddInputIsRefusedAndTheAgentRecovers is issue 11's scenario: an
// input with an odd byte or header — an invalid UTF-8 ce-id, an attribute
// header sent twice, a 70 KB ce-source, the same invalid ce-id with an
// 800 KB body, a Go API signal with an invalid UTF-8 id — is refused with
// a reason before anything is acknowledged, its dead letter reaches the
// log stream dlq, and the agent it was sent to comes back after a
// restart with the state it had.
func TestOddInputIsRefusedAndTheAgentRecovers(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Runtime().Call(ctx, "p1", sig); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	const subject = "jido.agent.p1.counter.increment"
	header := func(kv ...string) nats.Header {
		h := nats.Header{"ce-specversion": {"1.0"}, "ce-source": {"x"}}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = append(h[kv[i]], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name   string
		msg    *nats.Msg
		reason string
	}{
		{"invalid UTF-8 ce-id", &nats.Msg{Header: header("ce-id", "bad%FF"), Data: []byte(`{"by":1}`)}, bus.ReasonInvalidAttribute},
		{"ce-id and CE-ID", &nats.Msg{Header: header("ce-id", "one", "CE-ID", "two"), Data: []byte(`{"by":1}`)}, bus.ReasonInvalidAttribute},
		{"70 KB ce-source", &nats.Msg{Header: nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"big"}, "ce-source": {strings.Repeat("s", 70<<10)}}, Data: []byte(`{"by":1}`)}, bus.ReasonTooLarge},
		{"invalid ce-id, 800 KB body", &nats.Msg{Header: header("ce-id", "bad%FF"), Data: []byte(`"` + strings.Repeat("x", 800_000) + `"`)}, bus.ReasonInvalidAttribute},
	}
	for _, c := range cases {
		c.msg.Subject = subject
		reply, err := nc.RequestMsg(c.msg, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var st bus.ReplyStatus
		if err := json.Unmarshal(reply.Data, &st); err != nil {
			t.Fatalf("%s: reply %s: %v", c.name, reply.Data, err)
		}
		if st.OK || st.Error == nil || st.Error.Type != c.reason {
			t.Fatalf("%s: reply %.300s, want a %s refusal", c.name, reply.Data, c.reason)
		}
	}
	// The Go API: a signal object in a control-plane call.
	apiReq := []byte("{\"id\":\"p1\",\"signal\":{\"specversion\":\"1.0\",\"id\":\"bad\xff\",\"source\":\"x\",\"type\":\"counter.increment\",\"data\":{\"by\":1}}}")
	reply, err := nc.Request("jido.api.agent.call", apiReq, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var st bus.ReplyStatus
	if err := json.Unmarshal(reply.Data, &st); err != nil || st.OK || st.Error == nil || st.Error.Type != bus.ReasonInvalidAttribute {
		t.Fatalf("agent call with an invalid UTF-8 signal id: reply %s (%v), want invalid_attribute", reply.Data, err)
	}
	// Attributes the log would take but the door must not (a quarter of
	// the log's limit is an input's): the Go API is a door too.
	apiReq = []byte(`{"id":"p1","signal":{"specversion":"1.0","id":"big","source":"/` + strings.Repeat("s", 20<<10) + `","type":"counter.increment","data":{"by":1}}}`)
	if reply, err = nc.Request("jido.api.agent.call", apiReq, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(reply.Data, &st); err != nil || st.OK || st.Error == nil || st.Error.Type != bus.ReasonTooLarge {
		t.Fatalf("agent call with a 20 KB source: reply %.300s (%v), want too_large", reply.Data, err)
	}

	testkit.EventuallyNil(t, fmt.Sprintf("%d dead letters", len(cases)), func() error {
		info, err := n.Log().Stream(DeadLetterStream)
		if err == nil && info.Count < uint64(len(cases)) {
			err = fmt.Errorf("dlq stream: %+v", info)
		}
		return err
	})
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	n = startNode(t, dir)
	defer n.Shutdown(context.Background())
	info, err := n.Runtime().State("p1")
	if err != nil || !strings.Contains(string(info.State), `"count":1`) {
		t.Fatalf("p1 after restart: %+v %v, want count 1", info, err)
	}
}

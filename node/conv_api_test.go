package node

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// convReply is any reply of the conv area, as a client reads it.
type convReply struct {
	OK    bool `json:"ok"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	ID            string `json:"id"`
	Conversation  string `json:"conversation"`
	Conversations []struct {
		Conv string `json:"conv"`
	} `json:"conversations"`
}

// askConv sends body to subject and decodes the reply; a request the
// server refuses by permission gets no reply and fails.
func askConv(t *testing.T, nc *nats.Conn, subject, body string) (convReply, error) {
	t.Helper()
	var r convReply
	msg, err := nc.Request(subject, []byte(body), 2*time.Second)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		t.Fatalf("%s: reply %s: %v", subject, msg.Data, err)
	}
	return r, nil
}

// TestConvAPIOverNATS: conv.start, ls and stop over NATS, with the roles:
// a client starts and lists conversations (as conv send starts them), an
// operator also stops them; refusals carry their type; the project area's
// verbs of the release before say where they went.
func TestConvAPIOverNATS(t *testing.T) {
	n := startWithUsers(t, "jido")
	op, client := connectAs(t, n, RoleOperator), connectAs(t, n, RoleClient)
	body, _ := json.Marshal(map[string]string{"root": t.TempDir(), "id": "p1"})
	if r, err := askConv(t, op, "jido.api.project.open", string(body)); err != nil || !r.OK {
		t.Fatalf("open: %+v %v", r, err)
	}
	r, err := askConv(t, client, "jido.api.conv.start", `{"project":"p1","conversation":"c1"}`)
	if err != nil || !r.OK || r.ID != "p1/c1" || r.Conversation != "c1" {
		t.Fatalf("conv.start as a client: %+v %v", r, err)
	}
	if info, err := n.Runtime().State("p1/c1"); err != nil || info.Parent == nil || info.Parent.ID != "p1" {
		t.Fatalf("p1/c1: %+v %v", info, err)
	}
	if r, err := askConv(t, op, "jido.api.conv.start", `{"project":"p1"}`); err != nil || !r.OK || r.Conversation == "" {
		t.Fatalf("conv.start with no id: %+v %v", r, err)
	}
	for _, c := range []struct{ body, typ string }{
		{`{"project":"p1","conversation":"c1"}`, "already_exists"},
		{`{"project":"nope","conversation":"c1"}`, "not_found"},
		{`{"conversation":"c1"}`, "invalid_request"},
		{`{"project":"p1","conversation":"a/b"}`, "invalid_request"},
		{`{"project":"p1","conversation":"c1","extra":1}`, "invalid_request"},
		{`not json`, "invalid_request"},
	} {
		if r, err := askConv(t, op, "jido.api.conv.start", c.body); err != nil || r.OK || r.Error == nil || r.Error.Type != c.typ {
			t.Errorf("conv.start %s: %+v %v, want %s", c.body, r, err, c.typ)
		}
	}
	// conv.ls reads the status read model, which follows the log.
	testkit.EventuallyNil(t, "conv.ls to list both conversations", func() error {
		r, err := askConv(t, client, "jido.api.conv.ls", `{"project":"p1"}`)
		if err != nil || !r.OK {
			t.Fatalf("conv.ls as a client: %+v %v", r, err)
		}
		if len(r.Conversations) != 2 {
			return fmt.Errorf("conv.ls: %+v", r)
		}
		return nil
	})
	if _, err := askConv(t, client, "jido.api.conv.stop", `{"project":"p1","conversation":"c1"}`); err == nil {
		t.Fatal("a client stopped a conversation")
	}
	if r, err := askConv(t, op, "jido.api.conv.stop", `{"project":"p1","conversation":"c1","reason":"done"}`); err != nil || !r.OK {
		t.Fatalf("conv.stop: %+v %v", r, err)
	}
	if r, err := askConv(t, op, "jido.api.conv.stop", `{"project":"p1","conversation":"c1"}`); err != nil || r.OK || r.Error.Type != "not_found" {
		t.Fatalf("conv.stop again: %+v %v", r, err)
	}
	if r, err := askConv(t, op, "jido.api.conv.stop", `{"project":"p1"}`); err != nil || r.OK || r.Error.Type != "invalid_request" {
		t.Fatalf("conv.stop without a conversation: %+v %v", r, err)
	}
	info, err := n.Runtime().State("p1")
	if err != nil {
		t.Fatal(err)
	}
	if running := conversation.Under("p1", maps.Values(info.Children)); len(running) != 1 || slices.Contains(running, "p1/c1") {
		t.Fatalf("p1's conversations after the stop: %v", running)
	}
	// A forged project.conv.started is refused like every signal to a
	// project's agent.
	if r, err := askConv(t, client, "jido.agent.p1.project.conv.started", `{"conversation":"x","id":"p1/x"}`); err != nil || r.OK || r.Error.Type != "forbidden" {
		t.Fatalf("a forged project.conv.started: %+v %v", r, err)
	}
	// The verbs of the project area each role could send say where they
	// went.
	for _, c := range []struct {
		nc   *nats.Conn
		verb string
	}{{client, "conv.start"}, {client, "conv.ls"}, {op, "conv.stop"}} {
		if r, err := askConv(t, c.nc, "jido.api.project."+c.verb, `{"project":"p1","conversation":"c9"}`); err != nil || r.OK || r.Error.Type != "moved" {
			t.Errorf("project.%s: %+v %v, want moved", c.verb, r, err)
		}
	}
}

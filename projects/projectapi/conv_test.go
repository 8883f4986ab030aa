package projectapi_test

import (
	"encoding/json"
	"testing"

	"github.com/jido-bus/jido-bus/node"
)

type convReply struct {
	OK    bool `json:"ok"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	ID            string `json:"id"`
	Conversation  string `json:"conversation"`
	Conversations []struct {
		ID string `json:"id"`
	} `json:"conversations"`
}

// TestConvAPIOverNATS: project.conv.start, ls and stop over NATS, with the
// roles: a client starts and lists conversations (as conv send starts
// them), an operator also stops them; refusals carry their type.
func TestConvAPIOverNATS(t *testing.T) {
	n := startNode(t)
	op, client := connectAs(t, n, node.RoleOperator), connectAs(t, n, node.RoleClient)
	body, _ := json.Marshal(map[string]string{"root": t.TempDir(), "id": "p1"})
	if r, err := request(t, op, "jido.api.project.open", string(body)); err != nil || !r.OK {
		t.Fatalf("open: %+v %v", r, err)
	}
	r, err := ask[convReply](t, client, "jido.api.project.conv.start", `{"project":"p1","conversation":"c1"}`)
	if err != nil || !r.OK || r.ID != "p1/c1" || r.Conversation != "c1" {
		t.Fatalf("conv.start as a client: %+v %v", r, err)
	}
	if info, err := n.Runtime().State("p1/c1"); err != nil || info.Parent == nil || info.Parent.ID != "p1" {
		t.Fatalf("p1/c1: %+v %v", info, err)
	}
	if r, err := ask[convReply](t, op, "jido.api.project.conv.start", `{"project":"p1"}`); err != nil || !r.OK || r.Conversation == "" {
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
		if r, err := ask[convReply](t, op, "jido.api.project.conv.start", c.body); err != nil || r.OK || r.Error == nil || r.Error.Type != c.typ {
			t.Errorf("conv.start %s: %+v %v, want %s", c.body, r, err, c.typ)
		}
	}
	if r, err := ask[convReply](t, client, "jido.api.project.conv.ls", `{"project":"p1"}`); err != nil || !r.OK || len(r.Conversations) != 2 {
		t.Fatalf("conv.ls as a client: %+v %v", r, err)
	}
	if r, err := ask[convReply](t, client, "jido.api.project.conv.ls", `{}`); err != nil || r.OK || r.Error.Type != "invalid_request" {
		t.Fatalf("conv.ls without a project: %+v %v", r, err)
	}
	if _, err := ask[convReply](t, client, "jido.api.project.conv.stop", `{"project":"p1","conversation":"c1"}`); err == nil {
		t.Fatal("a client stopped a conversation")
	}
	if r, err := ask[convReply](t, op, "jido.api.project.conv.stop", `{"project":"p1","conversation":"c1","reason":"done"}`); err != nil || !r.OK {
		t.Fatalf("conv.stop: %+v %v", r, err)
	}
	if r, err := ask[convReply](t, op, "jido.api.project.conv.stop", `{"project":"p1","conversation":"c1"}`); err != nil || r.OK || r.Error.Type != "not_found" {
		t.Fatalf("conv.stop again: %+v %v", r, err)
	}
	if r, err := ask[convReply](t, op, "jido.api.project.conv.stop", `{"project":"p1"}`); err != nil || r.OK || r.Error.Type != "invalid_request" {
		t.Fatalf("conv.stop without a conversation: %+v %v", r, err)
	}
	if r, err := ask[convReply](t, client, "jido.api.project.conv.ls", `{"project":"p1"}`); err != nil || !r.OK || len(r.Conversations) != 1 {
		t.Fatalf("conv.ls after stop: %+v %v", r, err)
	}
	// A forged project.conv.started is refused like every signal to a
	// project's agent.
	if r, err := ask[convReply](t, client, "jido.agent.p1.project.conv.started", `{"conversation":"x","id":"p1/x"}`); err != nil || r.OK || r.Error.Type != "forbidden" {
		t.Fatalf("a forged project.conv.started: %+v %v", r, err)
	}
}

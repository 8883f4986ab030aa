package node

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
)

// TestConvModeIsAnOperators: a client may choose a conversation's mode
// when it starts one (it could start one in auto anyway), but only an
// operator changes the mode of a running conversation: a client that
// could would lift a plan an operator set.
func TestConvModeIsAnOperators(t *testing.T) {
	n := startWithUsers(t, "jido")
	op, client := connectAs(t, n, RoleOperator), connectAs(t, n, RoleClient)
	body, _ := json.Marshal(map[string]string{"root": t.TempDir(), "id": "p1"})
	if r, err := askConv(t, op, "jido.api.project.open", string(body)); err != nil || !r.OK {
		t.Fatalf("open: %+v %v", r, err)
	}
	if r, err := askConv(t, client, "jido.api.conv.start", `{"project":"p1","conversation":"c1","mode":"plan"}`); err != nil || !r.OK {
		t.Fatalf("conv.start in plan as a client: %+v %v", r, err)
	}
	if _, err := askConv(t, client, "jido.api.conv.mode", `{"conv":"p1/c1","mode":"auto"}`); err == nil {
		t.Fatal("a client changed a conversation's mode")
	}
	if r, err := askConv(t, op, "jido.api.conv.mode", `{"conv":"p1/c1","mode":"auto","by":"ops"}`); err != nil || !r.OK {
		t.Fatalf("conv.mode as an operator: %+v %v", r, err)
	}
}

// TestConvModeCannotBeForged: conversation.mode sent to a conversation
// the assistant drives other than through jido.api.conv.mode — on the
// agent API, by the node's own admin connection — is refused forbidden,
// like every event only the node writes, and nothing is appended: the
// mode of a conversation is changed by an operator's conv.mode alone.
func TestConvModeCannotBeForged(t *testing.T) {
	n := startQuickNode(t)
	talk(t, n, `{"text":"hello"}`+"\n", "", "hi")
	awaitEvent(t, n, "p1/c1", conversation.AssistantMessage, nil)
	nc := nodeConn(t, n)
	for _, subject := range []string{"jido.api.agent.call", "jido.api.agent.cast"} {
		m, err := nc.Request(subject, []byte(`{"id":"p1/c1","type":"conversation.mode","data":{"mode":"auto"}}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(m.Data), `"type":"forbidden"`) {
			t.Fatalf("%s conversation.mode: %s, want forbidden", subject, m.Data)
		}
	}
	for _, e := range convEvents(t, n, "p1/c1") {
		if e.Event.Type() == conversation.ModeChanged {
			t.Fatalf("a forged conversation.mode is in the stream: %s", e.Event.ID())
		}
	}
}

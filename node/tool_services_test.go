package node

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// TestToolServiceRole: on a node with users, a user of role toolservice
// announces a tool whose calls come to its own subject, answers them on
// the node's inbox (allow_responses), and the project's call succeeds;
// clients and operators may not announce, and a tool service may not hear
// another service's calls.
func TestToolServiceRole(t *testing.T) {
	const p = "acme.bus"
	n := startWithUsers(t, p)
	ctx := context.Background()
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: t.TempDir(), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	svc := connectAs(t, n, RoleToolService)
	if _, err := svc.Subscribe(p+".tools.call.toolservice.echo", func(m *nats.Msg) {
		var req ToolRequest
		_ = json.Unmarshal(m.Data, &req)
		out, _ := json.Marshal(ToolReply{Output: req.Args})
		_ = m.Respond(out)
	}); err != nil {
		t.Fatal(err)
	}
	announce := []byte(`{"name":"svc_echo","input_schema":{"type":"object"},"subject":"` + p + `.tools.call.toolservice.echo"}`)
	rep, err := svc.Request(p+".tools.announce", announce, 5*time.Second)
	if err != nil || !strings.Contains(string(rep.Data), `"ok":true`) {
		t.Fatalf("announce as toolservice: %v %s", err, rep.Data)
	}
	res, err := n.Projects().CallTool(ctx, "p1", tools.ToolCall{Name: "svc_echo", Args: json.RawMessage(`{"x":1}`)})
	if err != nil || string(res.Data) != `{"x":1}` {
		t.Fatalf("svc_echo: %+v %v", res, err)
	}
	for _, role := range []string{RoleClient, RoleOperator} {
		if _, err := connectAs(t, n, role).Request(p+".tools.announce", announce, 300*time.Millisecond); err == nil {
			t.Errorf("%s announced a tool", role)
		}
	}
	denied := make(chan error, 1)
	other, err := nats.Connect(n.URL(), nats.UserInfo(RoleToolService, RoleToolService+"pw"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case denied <- err:
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Subscribe(p+".tools.call.someoneelse.>", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-denied:
		if !strings.Contains(err.Error(), "Permissions Violation") {
			t.Errorf("subscribe to another service's calls: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("a tool service subscribed to another service's calls")
	}
}

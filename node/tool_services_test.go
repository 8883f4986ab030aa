package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
	"github.com/jido-bus/jido-bus/projects/toolservice"
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
		var req toolservice.Request
		_ = json.Unmarshal(m.Data, &req)
		out, _ := json.Marshal(toolservice.Reply{Output: req.Args})
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

// TestToolAnnounceRefusals: what an announcer may not do — each refusal
// answered with ok:false and why, the catalog unchanged.
func TestToolAnnounceRefusals(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer func() { _ = n.Shutdown(context.Background()) }()
	nc := n.Conn()
	ask := func(subject, body string) string {
		t.Helper()
		rep, err := nc.Request(subject, []byte(body), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		return string(rep.Data)
	}
	big := `"` + strings.Repeat("x", toolservice.MaxSchema) + `"`
	for _, c := range []struct{ body, want string }{
		{`not json`, "not a JSON tool announce"},
		{`{"name":"read_file","input_schema":{"type":"object"},"subject":"jido.tools.call.x"}`, "starts with svc_"},
		{`{"name":"svc_x","input_schema":{"type":"object"},"subject":"jido.api.project.open"}`, "under jido.tools.call."},
		{`{"name":"svc_x","input_schema":{"type":"object"},"subject":"jido.tools.call.>"}`, "no wildcards"},
		{`{"name":"svc_x","input_schema":{"type":"object"},"subject":"$JS.API.STREAM.DELETE.x"}`, "under jido.tools.call."},
		{`{"name":"svc_x","input_schema":{"type":"object"},"subject":"jido.tools.call.x","ttl":0.1}`, "ttl"},
		{`{"name":"svc_x","input_schema":{"type":"object"},"subject":"jido.tools.call.x","timeout":3600}`, "timeout"},
		{`{"name":"svc_x","input_schema":{"$ref":"file:///etc/passwd"},"subject":"jido.tools.call.x"}`, "self-contained"},
		{`{"name":"svc_x","input_schema":{"type":"object","description":` + big + `},"subject":"jido.tools.call.x"}`, "at most"},
		{`{"name":"svc_x","input_schema":{"type":"object"},"subject":"jido.tools.call.x","pad":"` + strings.Repeat("x", toolservice.MaxAnnounce) + `"}`, "at most"},
	} {
		if out := ask("jido.tools.announce", c.body); !strings.Contains(out, `"ok":false`) || !strings.Contains(out, c.want) {
			t.Errorf("announce %.80s: %s, want a refusal saying %q", c.body, out, c.want)
		}
	}
	if out := ask("jido.tools.withdraw", `{"name":"svc_x","subject":"jido.tools.call.x"}`); !strings.Contains(out, `"ok":false`) {
		t.Errorf("withdraw of a tool never offered: %s", out)
	}
	for i := range toolservice.MaxTools {
		body := fmt.Sprintf(`{"name":"svc_%d","input_schema":{"type":"object"},"subject":"jido.tools.call.x"}`, i)
		if out := ask("jido.tools.announce", body); !strings.Contains(out, `"ok":true`) {
			t.Fatalf("announce %d: %s", i, out)
		}
	}
	if out := ask("jido.tools.announce", `{"name":"svc_more","input_schema":{"type":"object"},"subject":"jido.tools.call.x"}`); !strings.Contains(out, "the most a node takes") {
		t.Errorf("announce over the bound: %s", out)
	}
}

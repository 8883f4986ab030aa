package projectapi_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/crypto/bcrypt"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
)

// startNode starts a node on a free port with a user of each role, named
// after it, password "<role>pw".
func startNode(t *testing.T) *node.Node {
	t.Helper()
	var users []node.User
	for _, r := range node.Roles() {
		h, err := bcrypt.GenerateFromPassword([]byte(r+"pw"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, node.User{Name: r, Password: string(h), Role: r})
	}
	n, err := node.Start(context.Background(), node.Config{DataDir: t.TempDir(), NoSync: true,
		NATS:     node.NATSConfig{Listen: "127.0.0.1:0", Users: users},
		Projects: func(c *projects.Config) { c.NoWatch = true }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	return n
}

func connectAs(t *testing.T, n *node.Node, role string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(n.URL(), nats.UserInfo(role, role+"pw"), nats.CustomInboxPrefix(node.InboxPrefix(role)),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

type reply struct {
	OK    bool `json:"ok"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	ID     string          `json:"id"`
	Data   json.RawMessage `json:"data"`
	CallID string          `json:"call_id"`
	Tools  json.RawMessage `json:"tools"` // a count in get's reply, a list in tools'

	Projects []struct {
		ID string `json:"id"`
	} `json:"projects"`
}

// ask sends body to subject and decodes the reply into an R; a request
// the server refuses by permission gets no reply and fails.
func ask[R any](t *testing.T, nc *nats.Conn, subject, body string) (R, error) {
	t.Helper()
	var r R
	msg, err := nc.Request(subject, []byte(body), 2*time.Second)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		t.Fatalf("%s: reply %s: %v", subject, msg.Data, err)
	}
	return r, nil
}

func request(t *testing.T, nc *nats.Conn, subject, body string) (reply, error) {
	t.Helper()
	return ask[reply](t, nc, subject, body)
}

func TestProjectAPIOverNATS(t *testing.T) {
	n := startNode(t)
	op, client := connectAs(t, n, node.RoleOperator), connectAs(t, n, node.RoleClient)
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"root": dir, "id": "p1"})
	if r, err := request(t, op, "jido.api.project.open", string(body)); err != nil || !r.OK || r.ID != "p1" {
		t.Fatalf("open: %+v %v", r, err)
	}
	if _, err := request(t, client, "jido.api.project.open", string(body)); err == nil {
		t.Fatal("a client opened a project")
	}
	if r, err := request(t, client, "jido.api.project.ls", ""); err != nil || len(r.Projects) != 1 {
		t.Fatalf("ls as a client: %+v %v", r, err)
	}
	if r, err := request(t, client, "jido.api.project.tools", `{"project":"p1"}`); err != nil || !strings.Contains(string(r.Tools), `"name":"read_file"`) {
		t.Fatalf("tools as a client: %+v %v", r, err)
	}
	// Each tool carries what a gateway lists (MCP's hints, outputSchema):
	// its safety notes, and its output schema where it has one.
	if r, _ := request(t, client, "jido.api.project.tools", `{"project":"p1"}`); !strings.Contains(string(r.Tools), `"safety":{"reads":true,"writes":false,"runs":false}`) {
		t.Errorf("tools carry no safety notes: %s", r.Tools)
	}
	call := `{"project":"p1","name":"read_file","args":{"path":"a.txt"}}`
	if _, err := request(t, client, "jido.api.project.tool.call", call); err == nil {
		t.Fatal("a client called a tool")
	}
	if r, err := request(t, op, "jido.api.project.tool.call", call); err != nil || !r.OK || !strings.Contains(string(r.Data), "hello") || r.CallID == "" {
		t.Fatalf("tool.call: %+v %v", r, err)
	}
	r, err := request(t, op, "jido.api.project.tool.call", `{"project":"p1","name":"read_file","args":{"path":"escape"}}`)
	if err != nil || r.OK || r.Error == nil || r.Error.Type != "outside_root" {
		t.Fatalf("tool.call through a link out of the root: %+v %v", r, err)
	}
	if r, err := request(t, op, "jido.api.project.get", `{"project":"nope"}`); err != nil || r.OK || r.Error.Type != "not_found" {
		t.Fatalf("get of an unknown project: %+v %v", r, err)
	}
	if r, err := request(t, op, "jido.api.project.get", `{}`); err != nil || r.OK || r.Error.Type != "invalid_request" {
		t.Fatalf("get without a project: %+v %v", r, err)
	}

	// A project's stream is the engine's alone: a forged close is refused.
	forged := `{"reason":"forged"}`
	if r, err := request(t, client, "jido.agent.p1.project.stopped", forged); err != nil || r.OK || r.Error.Type != "forbidden" {
		t.Fatalf("a forged project.stopped: %+v %v", r, err)
	}
	if _, err := n.Projects().Get("p1"); err != nil {
		t.Fatalf("the forged close closed the project: %v", err)
	}
	// Nor through the agent API, nor as a broadcast every project routes.
	for _, c := range []struct{ subject, body string }{
		{"jido.api.agent.call", `{"id":"p1","type":"project.stopped","data":{"reason":"forged"}}`},
		{"jido.api.agent.cast", `{"id":"p1","type":"project.stopped","data":{"reason":"forged"}}`},
		{"jido.api.agent.stop", `{"id":"p1","reason":"forged"}`},
		{"jido.signal.project.stopped", forged},
	} {
		who := client
		if c.subject == "jido.api.agent.stop" {
			who = op // a client may not stop agents at all
		}
		if r, err := request(t, who, c.subject, c.body); err != nil || r.OK || r.Error == nil || r.Error.Type != "forbidden" {
			t.Errorf("%s to project p1: %+v %v, want forbidden", c.subject, r, err)
		}
	}
	if _, err := n.Projects().Get("p1"); err != nil {
		t.Fatalf("a forged signal closed the project: %v", err)
	}

	if r, err := request(t, op, "jido.api.project.close", `{"project":"p1"}`); err != nil || !r.OK {
		t.Fatalf("close: %+v %v", r, err)
	}
}

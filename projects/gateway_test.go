package projects_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// TestGatewayRequestsAreInTheStream: a gateway's record of a request is an
// entry of the project's stream, with who, what and the result; a project
// that is not open has no stream to record in.
func TestGatewayRequestsAreInTheStream(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	ctx := context.Background()
	e := n.Projects()
	if _, err := e.Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	r := gateway.Request{Gateway: "mcp", Method: "tools/call", Target: "read_file", Caller: gateway.Caller{Name: "ide", Remote: "127.0.0.1:5000"}, Result: "outside_root", Error: "../x is outside"}
	if err := e.RecordGatewayRequest(ctx, "p1", r); err != nil {
		t.Fatal(err)
	}
	types, data := entries(t, n, "p1")
	last := len(types) - 1
	if types[last] != projects.TypeGatewayRequest || !strings.Contains(string(data[last]), `"caller":{"name":"ide","remote":"127.0.0.1:5000"}`) || !strings.Contains(string(data[last]), `"result":"outside_root"`) {
		t.Fatalf("last entry %s %s, want the gateway request", types[last], data[last])
	}
	if err := e.RecordGatewayRequest(ctx, "nosuch", r); bus.ErrorType(err) != bus.ReasonNotFound {
		t.Fatalf("record in a project not open: %v, want not_found", err)
	}
}

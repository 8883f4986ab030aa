package agentapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestWhereis: jido.api.agent.whereis names a running agent's type,
// stream and status, and answers not_found for an id no agent has — also
// once the agent is stopped.
func TestWhereis(t *testing.T) {
	f := serve(t, -1)
	request := func(subject, body string) (ok bool, r map[string]any, e *bus.Error) {
		t.Helper()
		msg, err := f.nc.Request(subject, []byte(body), 10*time.Second)
		if err != nil {
			t.Fatalf("%s %s: %v", subject, body, err)
		}
		var reply struct {
			OK    bool       `json:"ok"`
			Error *bus.Error `json:"error"`
		}
		if err := json.Unmarshal(msg.Data, &reply); err != nil {
			t.Fatalf("%s: reply %s: %v", subject, msg.Data, err)
		}
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			t.Fatal(err)
		}
		return reply.OK, r, reply.Error
	}
	if ok, _, e := request("jido.api.agent.start", `{"type":"counter","id":"w1"}`); !ok {
		t.Fatalf("start: %+v", e)
	}
	ok, r, e := request("jido.api.agent.whereis", `{"id":"w1"}`)
	if !ok || r["id"] != "w1" || r["type"] != "counter" || r["stream"] == "" || r["status"] != "running" {
		t.Fatalf("whereis w1: ok=%v %v %+v, want counter, its stream, running", ok, r, e)
	}
	if ok, _, e := request("jido.api.agent.whereis", `{"id":"nobody"}`); ok || e == nil || e.Type != bus.ReasonNotFound {
		t.Errorf("whereis of an unknown id: ok=%v %+v, want not_found", ok, e)
	}
	if ok, _, e := request("jido.api.agent.stop", `{"id":"w1"}`); !ok {
		t.Fatalf("stop: %+v", e)
	}
	if ok, _, e := request("jido.api.agent.whereis", `{"id":"w1"}`); ok || e == nil || e.Type != bus.ReasonNotFound {
		t.Errorf("whereis of a stopped agent: ok=%v %+v, want not_found", ok, e)
	}
}

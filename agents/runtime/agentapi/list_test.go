package agentapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// smallPayload is the test server's max_payload: a few dozen agents'
// descriptions pass it, so paging is exercised without thousands of
// agents.
const smallPayload = 4096

type fixture struct {
	rt *runtime.Runtime
	nc *nats.Conn
	b  *natsbus.Bus
}

// serve runs a runtime with the agent API on a NATS server whose
// max_payload is smallPayload.
func serve(t *testing.T, passivateAfter time.Duration) fixture {
	t.Helper()
	srv := natstest.RunServer(t, func(o *natsserver.Options) { o.MaxPayload = smallPayload })
	l, err := eventlog.Open(t.TempDir(), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	types := agents.NewRegistry()
	if err := builtin.Register(types); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: l, Types: types, PassivateAfter: passivateAfter})
	if err != nil {
		t.Fatal(err)
	}
	serverConn := natstest.Connect(t, srv)
	subjects, _ := bus.NewSubjects("")
	b := natsbus.New(serverConn, natsbus.Options{Subjects: subjects})
	if err := agentapi.Serve(b, rt, agentapi.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Shutdown(context.Background())
		_ = rt.Shutdown(context.Background())
		_ = l.Close()
	})
	return fixture{rt: rt, nc: natstest.Connect(t, srv), b: b}
}

type listReply struct {
	OK     bool           `json:"ok"`
	Agents []runtime.Info `json:"agents"`
	Next   string         `json:"next"`
	Error  *bus.Error     `json:"error"`
}

func (f fixture) list(t *testing.T, req any) (listReply, int) {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := f.nc.Request("jido.api.agent.list", body, 10*time.Second)
	if err != nil {
		t.Fatalf("list %s: %v", body, err)
	}
	var r listReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		t.Fatalf("list %s: reply %s: %v", body, msg.Data, err)
	}
	return r, len(msg.Data)
}

// TestListPagesUnderMaxPayload: more agents than one reply can carry
// under the server's max_payload are listed page by page, each page under
// the limit, every agent exactly once, in id order.
func TestListPagesUnderMaxPayload(t *testing.T) {
	f := serve(t, -1)
	ctx := context.Background()
	const total = 150
	want := map[string]bool{}
	for i := range total {
		id := fmt.Sprintf("counter-with-a-longish-name-%03d", i)
		if _, err := f.rt.Start(ctx, runtime.StartRequest{Type: "counter", ID: id}); err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	for _, limit := range []int{0, 7, agentapi.MaxListLimit + 1} {
		seen := map[string]int{}
		last, pages := "", 0
		req := map[string]any{}
		if limit != 0 {
			req["limit"] = limit
		}
		for {
			r, size := f.list(t, req)
			if !r.OK {
				t.Fatalf("limit %d: page %d: %+v", limit, pages, r.Error)
			}
			if size > smallPayload {
				t.Fatalf("limit %d: a reply of %d bytes passed max_payload %d", limit, size, smallPayload)
			}
			if limit > 0 && limit <= agentapi.MaxListLimit && len(r.Agents) > limit {
				t.Fatalf("limit %d: a page of %d agents", limit, len(r.Agents))
			}
			pages++
			for _, a := range r.Agents {
				if a.ID <= last {
					t.Fatalf("limit %d: %s after %s", limit, a.ID, last)
				}
				last = a.ID
				seen[a.ID]++
			}
			if r.Next == "" {
				break
			}
			req["after"] = r.Next
		}
		if len(seen) != total {
			t.Fatalf("limit %d: listed %d distinct agents of %d over %d pages", limit, len(seen), total, pages)
		}
		for id, n := range seen {
			if n != 1 || !want[id] {
				t.Fatalf("limit %d: %s listed %d times", limit, id, n)
			}
		}
		if pages < 2 {
			t.Fatalf("limit %d: one page held %d agents under a %d-byte max_payload", limit, total, smallPayload)
		}
	}
}

// TestListRefusesBadRequests: a cursor the API never gave, a negative
// limit, a cursor with the queue order each get an invalid_request error
// that says what to send instead.
func TestListRefusesBadRequests(t *testing.T) {
	f := serve(t, -1)
	for _, c := range []struct {
		req  map[string]any
		want string
	}{
		{map[string]any{"after": "not a cursor!"}, "cursor"},
		{map[string]any{"after": "Zm9vLy9iYXI"}, "cursor"}, // base64 of an invalid id
		{map[string]any{"limit": -1}, "limit"},
		{map[string]any{"sort": "queue", "after": "YzE"}, "queue"},
	} {
		r, _ := f.list(t, c.req)
		if r.OK || r.Error == nil || r.Error.Type != bus.ReasonInvalidRequest || !strings.Contains(r.Error.Message, c.want) {
			t.Errorf("list %v: %+v, want an invalid_request error about %q", c.req, r.Error, c.want)
		}
	}
}

// TestListOversizedState: an agent whose description alone passes
// max_payload is listed without its state rather than not at all.
func TestListOversizedState(t *testing.T) {
	f := serve(t, -1)
	ctx := context.Background()
	big := strings.Repeat("x", 2*smallPayload)
	for _, id := range []string{"a", "b", "c"} {
		init := map[string]any{}
		if id == "b" {
			init["blob"] = big
		}
		if _, err := f.rt.Start(ctx, runtime.StartRequest{Type: "counter", ID: id, InitialState: init}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	req := map[string]any{}
	for {
		r, _ := f.list(t, req)
		if !r.OK {
			t.Fatalf("%+v", r.Error)
		}
		for _, a := range r.Agents {
			ids = append(ids, a.ID)
			if a.ID == "b" && strings.Contains(string(a.State), "xxxx") {
				t.Fatal("b's oversized state listed")
			}
		}
		if r.Next == "" {
			break
		}
		req["after"] = r.Next
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("listed %v", ids)
	}
}

// TestListPassiveVersion: a passive agent is listed with the version it
// had when it went passive, not 0.
func TestListPassiveVersion(t *testing.T) {
	f := serve(t, 10*time.Millisecond)
	ctx := context.Background()
	if _, err := f.rt.Start(ctx, runtime.StartRequest{Type: "counter", ID: "p"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.rt.Call(ctx, "p", sig); err != nil {
			t.Fatal(err)
		}
	}
	var r listReply
	testkit.EventuallyNil(t, "the agent to go passive", func() error {
		r, _ = f.list(t, map[string]any{})
		if len(r.Agents) != 1 || r.Agents[0].Status != runtime.StatusPassive {
			return fmt.Errorf("listed: %+v", r.Agents)
		}
		return nil
	})
	if r.Agents[0].Version != 3 {
		t.Fatalf("passive agent listed at version %d, want 3", r.Agents[0].Version)
	}
}

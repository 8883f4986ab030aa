package emitapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// smallPayload is the test server's max_payload: a dozen emits fill a
// reply, so paging by size is exercised.
const smallPayload = 4096

type fixture struct {
	log   *eventlog.Log
	rt    *runtime.Runtime
	nc    *nats.Conn
	local emitapi.Local
}

// serve runs a runtime with counter c1 and the emits verb on a NATS
// server whose max_payload is smallPayload; c1 has counted to n.
func serve(t *testing.T, n int) fixture {
	t.Helper()
	srv := natstest.RunServer(t, func(o *natsserver.Options) { o.MaxPayload = smallPayload })
	l, err := eventlog.Open(t.TempDir(), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	types := agents.NewRegistry()
	if err := builtin.Register(types); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: l, Types: types})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	b := natsbus.New(natstest.Connect(t, srv), natsbus.Options{})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	local := emitapi.Local{Log: l}
	if err := emitapi.Serve(b, local); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(t.Context(), runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for range n {
		sig, err := bus.NewSignal("counter.increment", "test", map[string]any{"by": 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Call(t.Context(), "c1", sig); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{log: l, rt: rt, nc: natstest.Connect(t, srv), local: local}
}

// request sends body to log.emits as it comes and returns the raw reply.
func (f fixture) request(t *testing.T, body string) []byte {
	t.Helper()
	m, err := f.nc.Request("jido.api.log.emits", []byte(body), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return m.Data
}

// TestEmitsPagesWithinMaxPayload: a client reads every emit of an agent
// page by page, each reply within the server's max payload, each page
// going on where the last stopped, in the order the agent emitted them;
// the same pages as a read of the log in process.
func TestEmitsPagesWithinMaxPayload(t *testing.T) {
	const n = 40
	f := serve(t, n)
	client := emitapi.Client{NC: f.nc}
	var counts []int
	after, pages := "0", 0
	for {
		raw := f.request(t, fmt.Sprintf(`{"stream":"agent/c1","after":%q}`, after))
		if len(raw) > smallPayload {
			t.Fatalf("page %d is %d bytes, over the max payload %d", pages, len(raw), smallPayload)
		}
		var page struct {
			OK    bool
			Emits []struct {
				Position string
				Subject  string
				Event    struct{ Data struct{ Count int } }
			}
			Next string
			More bool
		}
		if err := json.Unmarshal(raw, &page); err != nil || !page.OK {
			t.Fatalf("reply %s: %v", raw, err)
		}
		pages++
		for _, e := range page.Emits {
			if e.Subject != "jido.emit.c1.counter.changed" {
				t.Errorf("emit at %s on %s", e.Position, e.Subject)
			}
			counts = append(counts, e.Event.Data.Count)
		}
		// The client and the log in process read the same page.
		c, err := runtime.ParseEmitCursor(after)
		if err != nil {
			t.Fatal(err)
		}
		viaClient, err := client.Emits(t.Context(), runtime.EmitsRequest{Stream: "agent/c1", After: c})
		if err != nil {
			t.Fatal(err)
		}
		local, err := emitapi.Local{Log: f.log, MaxBytes: smallPayload}.Emits(t.Context(), runtime.EmitsRequest{Stream: "agent/c1", After: c})
		if err != nil {
			t.Fatal(err)
		}
		if len(viaClient.Emits) != len(page.Emits) || viaClient.Next.String() != page.Next || !reflect.DeepEqual(positions(viaClient), positions(local)) {
			t.Errorf("after %s: the client read %v next %s, the log in process %v, the reply %s", after, positions(viaClient), viaClient.Next, positions(local), raw)
		}
		if !page.More {
			break
		}
		after = page.Next
	}
	if pages < 3 {
		t.Errorf("%d pages: the max payload did not page the read", pages)
	}
	for i, c := range counts {
		if c != i+1 {
			t.Fatalf("counts read %v, want 1..%d in order", counts, n)
		}
	}
	if len(counts) != n {
		t.Fatalf("read %d emits, want %d", len(counts), n)
	}
}

func positions(p runtime.EmitsPage) []string {
	var out []string
	for _, e := range p.Emits {
		out = append(out, e.Position.String())
	}
	return out
}

// TestEmitsErrors: what cannot be read is answered with a machine word
// and a sentence that says what to do.
func TestEmitsErrors(t *testing.T) {
	f := serve(t, 5)
	if _, err := f.log.TruncateBefore(t.Context(), "agent/c1", 6); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body, typ, says string
	}{
		{`{"stream":"agent/nosuch"}`, "not_found", "jido-bus log streams"},
		{`{"stream":"agent/c1","after":"3.0"}`, "gone", "read after 5"},
		{`{"after":"three"}`, "invalid_request", "SEQ.INDEX"},
		{`{"types":"a..b"}`, "invalid_pattern", ""},
		{`{"limit":-1}`, "invalid_request", "limit"},
		{`{"stream":"agent/c1","form":"x"}`, "invalid_request", "form"},
	} {
		raw := f.request(t, tc.body)
		var rep struct {
			OK    bool
			Error struct{ Type, Message string }
		}
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.OK || rep.Error.Type != tc.typ || !strings.Contains(rep.Error.Message, tc.says) {
			t.Errorf("%s: %s; want %s saying %q", tc.body, raw, tc.typ, tc.says)
		}
	}
	// Through the client, the errors are typed.
	_, err := emitapi.Client{NC: f.nc}.Emits(t.Context(), runtime.EmitsRequest{Stream: "agent/nosuch"})
	if !errors.Is(err, &bus.Error{Type: bus.ReasonNotFound}) {
		t.Errorf("client: %v, want not_found", err)
	}
}

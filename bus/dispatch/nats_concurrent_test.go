package dispatch

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestNATSDispatchConcurrentEmitsKeepTheirHeaders: Dispatch encodes into
// pooled messages; emits dispatched from many goroutines at once each
// arrive with their own id, position and Nats-Msg-Id, never another's.
func TestNATSDispatchConcurrentEmitsKeepTheirHeaders(t *testing.T) {
	nc := runNATS(t)
	sub, err := nc.SubscribeSync("jido.emit.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{}, Env{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			agent := fmt.Sprintf("c%d", w)
			for i := range each {
				s := testSignal(t, "counter.changed")
				s.SetID(fmt.Sprintf("%s-%d", agent, i))
				s.SetSource("/agent/" + agent)
				if i%3 == 0 {
					s.SetExtension("pad", fmt.Sprintf("%0*d", i, 0)) // vary the header count and sizes
				}
				ctx := WithPosition(context.Background(), Position{Stream: "agent/" + agent, Seq: uint64(i), GlobalSeq: uint64(w*each + i), Index: w})
				if err := d.Dispatch(ctx, agent, &s); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for range workers * each {
		msg, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		h := msg.Header
		id := h.Get("ce-id")
		var agent string
		var i int
		if _, err := fmt.Sscanf(id, "c%d-%d", new(int), &i); err != nil {
			t.Fatalf("ce-id %q: %v", id, err)
		}
		agent = id[:len(id)-len(strconv.Itoa(i))-1]
		w, _ := strconv.Atoi(agent[1:])
		want := map[string]string{
			"ce-source":     "/agent/" + agent,
			HeaderStream:    "agent/" + agent,
			HeaderSeq:       strconv.Itoa(i),
			HeaderGlobalSeq: strconv.Itoa(w*each + i),
			HeaderEmitIndex: strconv.Itoa(w),
			HeaderMsgID:     strconv.Quote("/agent/"+agent) + " " + strconv.Quote(id),
		}
		if msg.Subject != bus.DefaultPrefix+".emit."+agent+".counter.changed" {
			t.Fatalf("emit %s on %s", id, msg.Subject)
		}
		for k, v := range want {
			if got := h.Values(k); len(got) != 1 || got[0] != v {
				t.Fatalf("emit %s: header %s = %q, want %q", id, k, got, v)
			}
		}
		if _, pad := h["ce-pad"]; pad != (i%3 == 0) {
			t.Fatalf("emit %s: ce-pad present %v", id, pad)
		}
	}
}

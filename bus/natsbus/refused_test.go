package natsbus

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// refusals records what Options.OnRefused is told.
type refusals struct {
	mu  sync.Mutex
	got map[string]int
}

func (r *refusals) add(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[string]int{}
	}
	r.got[reason]++
}

func (r *refusals) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.got {
		out[k] = v
	}
	return out
}

// TestOnRefusedCountsEachRefusalOfTheBusOnce: every input the bus itself
// refuses — a signal it cannot decode, a request it cannot read, a request
// past a handler's limit, input after shutdown — is reported to OnRefused
// once, under its reason, answered and dead-lettered; refusals a handler
// decides (Delivery.Reject, DeadLetter) and answers that are not refusals
// (not_found) are not reported, for the handler counts its own.
func TestOnRefusedCountsEachRefusalOfTheBusOnce(t *testing.T) {
	var r refusals
	f := newFixture(t, Options{OnRefused: r.add})
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		d.Reject(bus.Errorf(bus.ReasonNotFound, "no agent"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.bus.HandleAPI("jido.api.x.get", func(_ context.Context, req []byte) (any, error) {
		var v struct {
			ID string `json:"id"`
		}
		if err := DecodeRequest(req, &v); err != nil {
			return nil, err
		}
		return nil, bus.Errorf(bus.ReasonNotFound, "no %q", v.ID)
	}); err != nil {
		t.Fatal(err)
	}
	hold, release := make(chan struct{}), make(chan struct{})
	if err := f.bus.HandleAPIConcurrent("jido.api.x.slow", 1, func(context.Context, []byte) (any, error) {
		close(hold)
		<-release
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ask := func(subject, body string) {
		t.Helper()
		if _, err := f.client.Request(subject, []byte(body), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// The door refuses: specversion 0.3.
	ask("jido.agent.a1.x", "")
	bad := binaryMsg(t, "jido.agent.a1.x", nil)
	bad.Header.Set("ce-specversion", "0.3")
	bad.Reply = ""
	if _, err := f.client.RequestMsg(bad, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	ask("jido.api.x.get", `{"id":"a"}`)         // not_found: an answer, not the bus's refusal
	ask("jido.api.x.get", `{"id":"a","idd":1}`) // unknown field: invalid_request
	slow := make(chan error, 1)
	go func() { _, err := f.client.Request("jido.api.x.slow", nil, 5*time.Second); slow <- err }()
	<-hold
	ask("jido.api.x.slow", "") // queue_overflow past the limit of 1
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	// Input after shutdown: the subscriptions are gone, so hand the bus's
	// own callbacks a message as NATS would have.
	if err := f.bus.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.bus.apiHandler("jido.api.x.get", func(context.Context, []byte) (any, error) { return nil, nil }, nil)(&nats.Msg{Subject: "jido.api.x.get"})
	f.bus.dispatch(binaryMsg(t, "jido.agent.a1.x", nil), func(context.Context, *Delivery) {})

	want := map[string]int{
		bus.ReasonInvalidSpecVersion: 1,
		bus.ReasonInvalidRequest:     1,
		bus.ReasonQueueOverflow:      1,
		bus.ReasonUnavailable:        2,
	}
	got := r.snapshot()
	if len(got) != len(want) {
		t.Fatalf("refusals %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("refusals %v, want %v", got, want)
		}
	}
	// Each is a dead letter too (and so is the handler's own refusal).
	if st := f.bus.Stats(); st.DeadLetters != 6 {
		t.Fatalf("stats %+v, want 6 dead letters: 5 the bus's refusals and the handler's", st)
	}
}

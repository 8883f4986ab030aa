package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

func TestFanoutDeliversToEveryTarget(t *testing.T) {
	nc := runNATS(t)
	sub, err := nc.SubscribeSync("jido.emit.c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ok := newReceiver(t, response{status: 200})
	bad := newReceiver(t, response{status: 400})
	cfg := Config{Targets: []Config{
		{Kind: KindNATS},
		hookConfig(ok.srv.URL),
		hookConfig(bad.srv.URL),
		{Kind: KindNoop},
	}}
	d, err := New(cfg, withConn(hookEnv(t, newFakeClock(), ok.srv.URL, bad.srv.URL), nc))
	if err != nil {
		t.Fatal(err)
	}
	s := testSignal(t, "counter.changed")
	err = d.Dispatch(context.Background(), "c1", &s)

	// The failing target is named, and does not keep the others from
	// getting the signal.
	if err == nil || !strings.Contains(err.Error(), "dispatch target [2] webhook:") {
		t.Fatalf("Dispatch = %v, want the failure of target [2] webhook", err)
	}
	if we, isWE := errors.AsType[*WebhookError](err); !isWE || we.Status != http.StatusBadRequest {
		t.Errorf("errors.As *WebhookError = %v, %v; want status 400", we, isWE)
	}
	if strings.Contains(err.Error(), "[0]") || strings.Contains(err.Error(), "[1]") {
		t.Errorf("error %q names targets that succeeded", err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Errorf("nats target: %v", err)
	}
	if n := len(ok.requests()); n != 1 {
		t.Errorf("good webhook got %d requests, want 1", n)
	}
	if n := len(bad.requests()); n != 1 {
		t.Errorf("bad webhook got %d requests, want 1", n)
	}
}

func TestFanoutRepanicsInCaller(t *testing.T) {
	f := &fanout{
		targets: []Dispatcher{noop{}, DispatcherFunc(func(context.Context, string, *bus.Signal) error { panic("boom") })},
		names:   []string{"[0] noop", "[1] test"},
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the target's panic", r)
		}
	}()
	s := testSignal(t, "counter.changed")
	_ = f.Dispatch(context.Background(), "c1", &s)
	t.Fatal("Dispatch returned instead of panicking")
}

func TestSingleTargetListIsTheTarget(t *testing.T) {
	d, err := New(Config{Targets: []Config{{Kind: KindNoop}}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, isNoop := d.(noop); !isNoop {
		t.Errorf("a one-element list built %T, want the element's dispatcher", d)
	}
}

// TestDispatcherConcurrentUse shares one Dispatcher between goroutines,
// for the race detector, and checks that every signal arrives.
func TestDispatcherConcurrentUse(t *testing.T) {
	nc := runNATS(t)
	sub, err := nc.SubscribeSync("jido.emit.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, response{status: 200})
	cfg := Config{Targets: []Config{{Kind: KindNATS}, hookConfig(rcv.srv.URL), {Kind: KindLog, Level: "debug"}}}
	d, err := New(cfg, withConn(hookEnv(t, newFakeClock(), rcv.srv.URL), nc))
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				s := testSignal(t, "counter.changed")
				s.SetID(fmt.Sprintf("w%d-%d", w, i))
				if err := d.Dispatch(context.Background(), fmt.Sprintf("a%d", w), &s); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for range workers * each {
		msg, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("after %d messages: %v", len(seen), err)
		}
		seen[msg.Header.Get("ce-id")] = true
	}
	if len(seen) != workers*each {
		t.Errorf("%d distinct ids over NATS, want %d", len(seen), workers*each)
	}
	if n := len(rcv.requests()); n != workers*each {
		t.Errorf("webhook got %d requests, want %d", n, workers*each)
	}
}

package natsbus

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestAPIRequestWithoutReplyIsRefused: a control-plane request published
// with no reply subject (nats pub jido.api.log.truncate …) is not done —
// no one could be told what happened — but refused: counted once,
// dead-lettered under invalid_request with a message that says to send a
// request, and the handler never runs.
func TestAPIRequestWithoutReplyIsRefused(t *testing.T) {
	var r refusals
	f := newFixture(t, Options{OnRefused: r.add})
	var ran atomic.Int32
	serve := func(context.Context, []byte) (any, error) { ran.Add(1); return nil, nil }
	if err := f.bus.HandleAPI("jido.api.log.truncate", serve); err != nil {
		t.Fatal(err)
	}
	if err := f.bus.HandleAPIConcurrent("jido.api.log.verify", 1, serve); err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"jido.api.log.truncate", "jido.api.log.verify"} {
		if err := f.client.Publish(subject, []byte(`{"stream":"agent/a","before":3}`)); err != nil {
			t.Fatal(err)
		}
		dl := f.nextDeadLetter(t)
		if dl.Subject != "jido.dlq.invalid_request" || dl.Header.Get(HeaderDLQSubject) != subject {
			t.Fatalf("dead letter on %s for %s, want jido.dlq.invalid_request for %s", dl.Subject, dl.Header.Get(HeaderDLQSubject), subject)
		}
		if msg := dl.Header.Get(HeaderDLQError); !strings.Contains(msg, "reply subject") || !strings.Contains(msg, "nats req") {
			t.Fatalf("dead letter error %q does not say to send a request with a reply subject", msg)
		}
	}
	// A request that can be answered still runs: the refusals above were
	// filed before it was served, serially per subject.
	if _, err := f.client.Request("jido.api.log.truncate", nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 1 {
		t.Fatalf("the handler ran %d times, want once (for the request with a reply subject only)", got)
	}
	if got := r.snapshot(); got[bus.ReasonInvalidRequest] != 2 || len(got) != 1 {
		t.Fatalf("OnRefused told %v, want invalid_request twice", got)
	}
	if st := f.bus.Stats(); st.Rejected != 2 || st.DeadLetters != 2 {
		t.Fatalf("stats = %+v, want 2 rejected and 2 dead letters", st)
	}
}

// TestAPIReplyTooLargeIsAnswered: a reply that does not fit the server's
// max payload cannot be sent; the requester gets an error that says so
// and what to do, at once, instead of waiting out its timeout.
func TestAPIReplyTooLargeIsAnswered(t *testing.T) {
	f := newFixture(t, Options{})
	big := strings.Repeat("x", int(f.client.MaxPayload()))
	if err := f.bus.HandleAPI("jido.api.log.streams", func(context.Context, []byte) (any, error) {
		return map[string]string{"streams": big}, nil
	}); err != nil {
		t.Fatal(err)
	}
	m, err := f.client.Request("jido.api.log.streams", nil, 5*time.Second)
	if err != nil {
		t.Fatalf("no answer to a request whose reply is too large: %v", err)
	}
	var st bus.ReplyStatus
	if err := json.Unmarshal(m.Data, &st); err != nil {
		t.Fatal(err)
	}
	e := bus.AsError(st.Err())
	if st.OK || e.Type != bus.ReasonTooLarge || !strings.Contains(e.Message, "max payload") {
		t.Fatalf("reply = %s, want a too_large error naming the max payload", m.Data)
	}
}

// TestAPIRequestCutShortByShutdownIsUnavailable: a long request in flight
// when the node shuts down (an await, a verify) has its context cancelled;
// whatever error the handler then returns (an await's "timeout"), the
// requester is told unavailable — the node is going away, retry — not a
// timeout it did not ask for.
func TestAPIRequestCutShortByShutdownIsUnavailable(t *testing.T) {
	f := newFixture(t, Options{})
	entered := make(chan struct{})
	if err := f.bus.HandleAPIConcurrent("jido.api.agent.await", 4, func(ctx context.Context, _ []byte) (any, error) {
		close(entered)
		<-ctx.Done()
		return nil, bus.Errorf("timeout", "agent a1 has not completed")
	}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		data []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		m, err := f.client.Request("jido.api.agent.await", []byte(`{"id":"a1"}`), 10*time.Second)
		if err != nil {
			got <- answer{err: err}
			return
		}
		got <- answer{data: m.Data}
	}()
	<-entered
	if err := f.bus.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatalf("no answer to a request cut short by shutdown: %v", a.err)
	}
	var st bus.ReplyStatus
	if err := json.Unmarshal(a.data, &st); err != nil {
		t.Fatal(err)
	}
	e := bus.AsError(st.Err())
	if e.Type != bus.ReasonUnavailable || !strings.Contains(e.Message, "shut") || !strings.Contains(e.Message, "has not completed") {
		t.Fatalf("reply = %s, want unavailable saying the node shut down, keeping the handler's message", a.data)
	}
}

// TestAPIBadInputIsRefused: a request whose content breaks a grammar — an
// invalid agent id, pattern, type, subject, attribute — is bad input like
// an unreadable one: answered with its reason, dead-lettered and counted
// once. Answers about the world (not_found, a timeout) are not refusals.
func TestAPIBadInputIsRefused(t *testing.T) {
	var r refusals
	f := newFixture(t, Options{OnRefused: r.add})
	bad := []string{
		bus.ReasonInvalidAgentID, bus.ReasonInvalidPattern, bus.ReasonInvalidType, bus.ReasonInvalidSubject,
		bus.ReasonInvalidAttribute, bus.ReasonMissingAttribute, bus.ReasonInvalidSpecVersion, bus.ReasonTypeMismatch,
	}
	if err := f.bus.HandleAPI("jido.api.x.do", func(_ context.Context, req []byte) (any, error) {
		var v struct {
			Reason string `json:"reason"`
		}
		if err := DecodeRequest(req, &v); err != nil {
			return nil, err
		}
		return nil, bus.Errorf(v.Reason, "the request's %s", v.Reason)
	}); err != nil {
		t.Fatal(err)
	}
	for _, reason := range append(bad, bus.ReasonNotFound, "timeout") {
		m, err := f.client.Request("jido.api.x.do", []byte(`{"reason":"`+reason+`"}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(m.Data), `"type":"`+reason+`"`) {
			t.Fatalf("reply %s, want type %s", m.Data, reason)
		}
	}
	for _, reason := range bad {
		if dl := f.nextDeadLetter(t); dl.Subject != "jido.dlq."+reason {
			t.Fatalf("dead letter on %s, want jido.dlq.%s", dl.Subject, reason)
		}
	}
	got := r.snapshot()
	for _, reason := range bad {
		if got[reason] != 1 {
			t.Errorf("OnRefused told %s %d times, want once", reason, got[reason])
		}
	}
	if len(got) != len(bad) {
		t.Errorf("OnRefused told %v, want only the bad-input reasons", got)
	}
}

package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// response is one scripted answer of a test webhook receiver.
type response struct {
	status int
	header map[string]string
	body   string
}

// received is what the receiver saw of one request.
type received struct {
	method string
	header http.Header
	body   string
}

// receiver is a test webhook endpoint that answers with its script in
// order, repeating the last answer, and records every request.
type receiver struct {
	srv    *httptest.Server
	script []response

	mu   sync.Mutex
	reqs []received
}

func newReceiver(t *testing.T, script ...response) *receiver {
	t.Helper()
	r := &receiver{script: script}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("read request body: %v", err)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, received{req.Method, req.Header.Clone(), string(body)})
		resp := r.script[min(len(r.reqs), len(r.script))-1]
		r.mu.Unlock()
		for k, v := range resp.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.status)
		io.WriteString(w, resp.body)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.reqs...)
}

func hookConfig(url string) Config {
	return Config{Kind: KindWebhook, URL: url, SecretEnv: "JIDO_SECRET_HOOK", Headers: map[string]string{"X-Tenant": "t0"}}
}

// hookEnv is the Env of webhooks to the test servers at srvURLs (on
// 127.0.0.1): a policy that allows them, and JIDO_SECRET_HOOK=s3cret.
func hookEnv(t *testing.T, clock Clock, srvURLs ...string) Env {
	t.Helper()
	g, err := NewWebhookGuard(WebhookPolicy{Allow: srvURLs, AllowPrivate: []string{"127.0.0.0/8"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.CloseIdleConnections)
	return Env{Webhooks: g, Clock: clock, LookupEnv: envWith(map[string]string{"JIDO_SECRET_HOOK": "s3cret"})}
}

func TestWebhookSendsSignedCloudEvent(t *testing.T) {
	rcv := newReceiver(t, response{status: http.StatusNoContent})
	clock := newFakeClock()
	d, err := New(hookConfig(rcv.srv.URL+"/hook"), hookEnv(t, clock, rcv.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	sent := testSignal(t, "counter.changed")
	sent.SetID("id with spaces%")
	if err := d.Dispatch(context.Background(), "c1", &sent); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	reqs := rcv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	req := reqs[0]
	wantHeaders := map[string]string{
		"Content-Type":  ContentType,
		"Ce-Id":         "id%20with%20spaces%25",
		"Ce-Type":       "counter.changed",
		"X-Tenant":      "t0",
		HeaderTimestamp: "1767225600", // the fake clock's 2026-01-01T00:00:00Z
		HeaderSignature: Signature("s3cret", "1767225600", req.body),
	}
	for name, want := range wantHeaders {
		if got := req.header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if req.method != http.MethodPost {
		t.Errorf("method = %s, want POST", req.method)
	}
	// A receiver verifies with the secret; a negative skew because the
	// fake clock's timestamp is not today.
	ts, sig := req.header.Get(HeaderTimestamp), req.header.Get(HeaderSignature)
	if err := VerifySignature("s3cret", ts, req.body, sig, -1); err != nil {
		t.Errorf("VerifySignature: %v", err)
	}
	if err := VerifySignature("wrong", ts, req.body, sig, -1); !errors.Is(err, ErrBadSignature) {
		t.Errorf("VerifySignature with the wrong secret = %v, want ErrBadSignature", err)
	}
	var got event.Event
	if err := got.UnmarshalJSON([]byte(req.body)); err != nil {
		t.Fatalf("body is not a structured CloudEvent: %v", err)
	}
	assertSameSignal(t, got, sent)
}

func TestWebhookRetries(t *testing.T) {
	clockNow := newFakeClock().now
	cases := []struct {
		name        string
		script      []response
		maxAttempts int
		wantReqs    int
		wantSleeps  []time.Duration // exact delays, when set
		wantRange   [][2]time.Duration
		wantErr     []string // substrings of the error; nil means success
		wantStatus  int
	}{
		{
			name:      "500 then success",
			script:    []response{{status: 500}, {status: 502}, {status: 200}},
			wantReqs:  3,
			wantRange: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}},
		},
		{
			name:       "400 is not retried",
			script:     []response{{status: 400, body: "no such type"}, {status: 200}},
			wantReqs:   1,
			wantErr:    []string{"not retried after 1 attempt", "400 Bad Request", `"no such type"`},
			wantStatus: 400,
		},
		{
			name:       "redirect is not followed",
			script:     []response{{status: 302, header: map[string]string{"Location": "/elsewhere"}}, {status: 200}},
			wantReqs:   1,
			wantErr:    []string{"not retried", "302 Found"},
			wantStatus: 302,
		},
		{
			name:       "429 Retry-After seconds",
			script:     []response{{status: 429, header: map[string]string{"Retry-After": "7"}}, {status: 200}},
			wantReqs:   2,
			wantSleeps: []time.Duration{7 * time.Second},
		},
		{
			name:       "503 Retry-After date",
			script:     []response{{status: 503, header: map[string]string{"Retry-After": clockNow.Add(20 * time.Second).Format(http.TimeFormat)}}, {status: 200}},
			wantReqs:   2,
			wantSleeps: []time.Duration{20 * time.Second},
		},
		{
			name:      "Retry-After shorter than the backoff",
			script:    []response{{status: 429, header: map[string]string{"Retry-After": "0"}}, {status: 200}},
			wantReqs:  2,
			wantRange: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name:       "Retry-After past max_backoff ends the retries",
			script:     []response{{status: 429, header: map[string]string{"Retry-After": "120"}}, {status: 200}},
			wantReqs:   1,
			wantErr:    []string{"Retry-After 2m0s is longer than max_backoff 30s", "after 1 attempt"},
			wantStatus: 429,
		},
		{
			name:        "attempts are bounded",
			script:      []response{{status: 503, body: "down"}},
			maxAttempts: 3,
			wantReqs:    3,
			wantRange:   [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}},
			wantErr:     []string{"/hook", "gave up after 3 attempts", "last status 503 Service Unavailable", `"down"`},
			wantStatus:  503,
		},
		{
			name:       "default attempts",
			script:     []response{{status: 500}},
			wantReqs:   DefaultMaxAttempts,
			wantErr:    []string{"gave up after 5 attempts"},
			wantStatus: 500,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newReceiver(t, tc.script...)
			clock := newFakeClock()
			cfg := hookConfig(rcv.srv.URL + "/hook")
			cfg.MaxAttempts = tc.maxAttempts
			d, err := New(cfg, hookEnv(t, clock, rcv.srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			s := testSignal(t, "counter.changed")
			err = d.Dispatch(context.Background(), "c1", &s)

			if n := len(rcv.requests()); n != tc.wantReqs {
				t.Errorf("%d requests, want %d", n, tc.wantReqs)
			}
			if tc.wantErr == nil && err != nil {
				t.Errorf("Dispatch: %v", err)
			}
			if tc.wantErr != nil {
				we, ok := errors.AsType[*WebhookError](err)
				if !ok {
					t.Fatalf("Dispatch error = %v, want a *WebhookError", err)
				}
				if we.Status != tc.wantStatus || we.Attempts != tc.wantReqs {
					t.Errorf("Status, Attempts = %d, %d, want %d, %d", we.Status, we.Attempts, tc.wantStatus, tc.wantReqs)
				}
				for _, sub := range tc.wantErr {
					if !strings.Contains(err.Error(), sub) {
						t.Errorf("error %q does not contain %q", err, sub)
					}
				}
			}
			sleeps := clock.Sleeps()
			switch {
			case tc.wantSleeps != nil:
				if len(sleeps) != len(tc.wantSleeps) {
					t.Fatalf("sleeps = %v, want %v", sleeps, tc.wantSleeps)
				}
				for i := range sleeps {
					if sleeps[i] != tc.wantSleeps[i] {
						t.Errorf("sleeps = %v, want %v", sleeps, tc.wantSleeps)
					}
				}
			case tc.wantRange != nil:
				if len(sleeps) != len(tc.wantRange) {
					t.Fatalf("sleeps = %v, want %d in %v", sleeps, len(tc.wantRange), tc.wantRange)
				}
				for i, r := range tc.wantRange {
					if sleeps[i] < r[0] || sleeps[i] > r[1] {
						t.Errorf("sleep %d = %s, want in [%s, %s]", i, sleeps[i], r[0], r[1])
					}
				}
			default:
				if len(sleeps) != max(tc.wantReqs-1, 0) {
					t.Errorf("%d sleeps, want %d", len(sleeps), tc.wantReqs-1)
				}
			}
		})
	}
}

func TestWebhookRetriesNetworkErrors(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/hook"
	dead.Close() // nothing listens there now: connection refused
	clock := newFakeClock()
	cfg := hookConfig(url)
	cfg.MaxAttempts = 2
	d, err := New(cfg, hookEnv(t, clock, url))
	if err != nil {
		t.Fatal(err)
	}
	s := testSignal(t, "counter.changed")
	err = d.Dispatch(context.Background(), "c1", &s)
	we, ok := errors.AsType[*WebhookError](err)
	if !ok {
		t.Fatalf("Dispatch error = %v, want a *WebhookError", err)
	}
	if we.Attempts != 2 || we.Status != 0 || we.Err == nil || len(clock.Sleeps()) != 1 {
		t.Errorf("got Attempts %d, Status %d, Err %v, sleeps %v; want 2 attempts, no status, a transport error, 1 sleep",
			we.Attempts, we.Status, we.Err, clock.Sleeps())
	}
}

// hang keeps a handler from answering until the client goes away or the
// test releases it. The body is read first: only then does the server
// notice a closed connection and cancel r.Context().
func hang(r *http.Request, release <-chan struct{}) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-release:
	}
}

func TestWebhookAttemptTimeoutIsRetried(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			hang(r, release) // until the client gives up on the attempt
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: a failing test does not hang in Close
	cfg := hookConfig(srv.URL)
	cfg.Timeout = 20 * time.Millisecond
	d, err := New(cfg, hookEnv(t, newFakeClock(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	s := testSignal(t, "counter.changed")
	if err := d.Dispatch(context.Background(), "c1", &s); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("%d requests, want 2", calls)
	}
}

func TestWebhookCancelStopsRetries(t *testing.T) {
	t.Run("while waiting to retry", func(t *testing.T) {
		rcv := newReceiver(t, response{status: 500})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clock := newFakeClock()
		clock.onSleep = cancel
		d, err := New(hookConfig(rcv.srv.URL), hookEnv(t, clock, rcv.srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		s := testSignal(t, "counter.changed")
		err = d.Dispatch(ctx, "c1", &s)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Dispatch = %v, want context.Canceled", err)
		}
		if n := len(rcv.requests()); n != 1 {
			t.Errorf("%d requests after cancelling in the first wait, want 1", n)
		}
		if !strings.Contains(err.Error(), "stopped after 1 attempt; last status 500") {
			t.Errorf("error %q does not say it stopped and the last status", err)
		}
	})
	t.Run("during a request", func(t *testing.T) {
		arrived := make(chan struct{}, 1)
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			hang(r, release)
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-arrived
			cancel()
		}()
		clock := newFakeClock()
		d, err := New(hookConfig(srv.URL), hookEnv(t, clock, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		s := testSignal(t, "counter.changed")
		err = d.Dispatch(ctx, "c1", &s)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Dispatch = %v, want context.Canceled", err)
		}
		if n := len(clock.Sleeps()); n != 0 {
			t.Errorf("%d waits after a cancel, want none", n)
		}
	})
}

func TestWebhookRefusesInvalidSignal(t *testing.T) {
	rcv := newReceiver(t, response{status: 200})
	d, err := New(hookConfig(rcv.srv.URL), hookEnv(t, newFakeClock(), rcv.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	s := testSignal(t, "counter.changed")
	s.SetSource("")
	if err := d.Dispatch(context.Background(), "c1", &s); !errors.Is(err, &bus.Error{Type: bus.ReasonMissingAttribute}) {
		t.Fatalf("Dispatch = %v, want a missing_attribute error", err)
	}
	if n := len(rcv.requests()); n != 0 {
		t.Errorf("%d requests for an invalid signal, want 0", n)
	}
}

func TestSystemClockSleepStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An hour-long sleep must return at once: if it did not, the test
	// would time out rather than pass.
	if err := (systemClock{}).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if err := (systemClock{}).Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v", err)
	}
}

// TestWebhookSecretFromEnvironment: a webhook with secret_env signs with
// the variable's value, which its stored form never holds; a variable that
// is not set fails New with an error naming it.
func TestWebhookSecretFromEnvironment(t *testing.T) {
	rcv := newReceiver(t, response{status: http.StatusNoContent})
	cfg := hookConfig(rcv.srv.URL + "/hook")
	cfg.SecretEnv = "JIDO_SECRET_TEST_HOOK_KEY"
	stored, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), "env-s3cret") || !strings.Contains(string(stored), `"secret_env":"JIDO_SECRET_TEST_HOOK_KEY"`) {
		t.Fatalf("stored form %s", stored)
	}
	vars := map[string]string{"JIDO_SECRET_TEST_HOOK_KEY": "env-s3cret"}
	env := hookEnv(t, newFakeClock(), rcv.srv.URL)
	env.LookupEnv = envWith(vars)
	d, err := New(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	sent := testSignal(t, "counter.changed")
	if err := d.Dispatch(context.Background(), "c1", &sent); err != nil {
		t.Fatal(err)
	}
	req := rcv.requests()[0]
	if err := VerifySignature("env-s3cret", req.header.Get(HeaderTimestamp), req.body, req.header.Get(HeaderSignature), -1); err != nil {
		t.Fatalf("signature with the variable's value: %v", err)
	}
	delete(vars, "JIDO_SECRET_TEST_HOOK_KEY")
	_, err = New(cfg, env)
	if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), "JIDO_SECRET_TEST_HOOK_KEY") {
		t.Fatalf("New without the variable: %v", err)
	}
}

// withConn is env with a NATS connection, for lists with nats targets.
func withConn(env Env, nc *nats.Conn) Env {
	env.Conn = nc
	return env
}

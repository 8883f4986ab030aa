package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// How much of a failed response body is kept for the error, and how much
// is read and discarded so the connection can be reused.
const (
	maxErrorBody = 256
	maxDrainBody = 64 << 10
)

// webhook POSTs each signal as a structured CloudEvent, signed, with
// retries (see the package doc for the request and the retry rules).
type webhook struct {
	url      string
	shownURL string // url with any password redacted, for errors
	secret   string
	headers  http.Header
	settings webhookConfig
	client   *http.Client
	clock    Clock
}

// newWebhook assumes env.Webhooks admitted cfg, whose key is secret.
func newWebhook(cfg Config, secret string, env Env) *webhook {
	h := make(http.Header, len(cfg.Headers)+1)
	h.Set("User-Agent", "jido-bus")
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	return &webhook{
		url:      cfg.URL,
		shownURL: redactURL(cfg.URL),
		secret:   secret,
		headers:  h,
		settings: cfg.webhookSettings(),
		client:   env.Webhooks.client,
		clock:    env.Clock,
	}
}

// WebhookError is the error of a webhook delivery that did not succeed. It
// unwraps to Err, so errors.Is(err, context.Canceled) tells a delivery the
// caller stopped.
type WebhookError struct {
	URL      string // the endpoint, any password redacted
	Attempts int    // how many requests were sent (or tried)
	Status   int    // the last HTTP status received; 0 if none was
	Body     string // the start of that response's body, for diagnosis
	Err      error  // the last transport error, or the context error that stopped the retries; may be nil
	Why      string // why the retries ended: "gave up", "not retried", "stopped", or a longer explanation
}

func (e *WebhookError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "webhook %s: %s after %d attempt", e.URL, e.Why, e.Attempts)
	if e.Attempts != 1 {
		b.WriteByte('s')
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "; last status %d %s", e.Status, http.StatusText(e.Status))
		if e.Body != "" {
			fmt.Fprintf(&b, " %q", e.Body)
		}
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *WebhookError) Unwrap() error { return e.Err }

// Dispatch returns nil when an attempt got a 2xx answer, otherwise a
// *WebhookError (or, for a signal that fails bus.ValidateSignal, that
// *bus.Error, before any request).
func (w *webhook) Dispatch(ctx context.Context, from string, s *bus.Signal) error {
	if err := bus.ValidateSignal(s, bus.Limits{MaxDataBytes: -1}); err != nil {
		return fmt.Errorf("dispatch signal %s to webhook %s: %w", s.ID(), w.shownURL, err)
	}
	// Encoded once: every attempt sends the same bytes, so a receiver that
	// deduplicates by ce-id sees identical copies.
	body, err := s.MarshalJSON()
	if err != nil {
		return fmt.Errorf("dispatch signal %s to webhook %s: encode: %w", s.ID(), w.shownURL, err)
	}
	e := &WebhookError{URL: w.shownURL}
	for {
		e.Attempts++
		r := w.attempt(ctx, s, body)
		if r.err == nil && r.status/100 == 2 {
			return nil
		}
		if r.status != 0 {
			e.Status, e.Body = r.status, r.body
		}
		e.Err = r.err
		switch {
		case ctx.Err() != nil:
			e.Why, e.Err = "stopped", ctx.Err()
			return e
		case !r.retryable:
			e.Why = "not retried"
			return e
		case e.Attempts >= w.settings.maxAttempts:
			e.Why = "gave up"
			return e
		}
		delay := backoffDelay(e.Attempts, w.settings.backoff, w.settings.maxBackoff, rand.Float64())
		if r.hasRetryAfter {
			// Retrying sooner than the server asked only earns another 429
			// or 503; waiting longer than max_backoff would hold the
			// emitting agent's directive queue for as long as any server
			// likes, so that ends the retries instead.
			if r.retryAfter > w.settings.maxBackoff {
				e.Why = fmt.Sprintf("gave up (Retry-After %s is longer than max_backoff %s)", r.retryAfter, w.settings.maxBackoff)
				return e
			}
			delay = max(delay, r.retryAfter)
		}
		if err := w.clock.Sleep(ctx, delay); err != nil {
			e.Why, e.Err = "stopped", err
			return e
		}
	}
}

type attemptResult struct {
	status        int    // 0 when no response came
	body          string // the start of a non-2xx body
	err           error
	retryable     bool
	retryAfter    time.Duration
	hasRetryAfter bool
}

// attempt sends one request within the per-attempt timeout.
func (w *webhook) attempt(ctx context.Context, s *bus.Signal, body []byte) attemptResult {
	ctx, cancel := context.WithTimeout(ctx, w.settings.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return attemptResult{err: err}
	}
	req.Header = w.headers.Clone()
	ts := strconv.FormatInt(w.clock.Now().Unix(), 10)
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Signature(w.secret, ts, string(body)))
	req.Header.Set("Ce-Id", percentEncode(s.ID()))
	req.Header.Set("Ce-Type", s.Type())

	resp, err := w.client.Do(req)
	if err != nil {
		// Network errors and the per-attempt timeout; a cancelled caller
		// is told apart by Dispatch. An address the policy refuses will
		// still be refused after a wait.
		return attemptResult{err: err, retryable: !errors.Is(err, ErrPrivateAddress)}
	}
	defer resp.Body.Close()
	r := attemptResult{status: resp.StatusCode}
	if r.status/100 != 2 {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		r.body = strings.TrimSpace(string(head))
		r.retryable = r.status >= 500 || r.status == http.StatusTooManyRequests
		if r.retryable {
			r.retryAfter, r.hasRetryAfter = retryAfter(resp.Header, w.clock.Now())
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainBody))
	return r
}

// percentEncode writes a header value as the CloudEvents HTTP binding
// does: printable ASCII except space, '"' and '%' as is, every other byte
// as %XX. An id is free text, and a control byte in a header would make the
// request fail before it is sent.
func percentEncode(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error kinds: the words of conversation.llm.failed's error.type.
const (
	KindAuth        = "auth"         // 401/403: the key is missing, wrong or not allowed
	KindRateLimited = "rate_limited" // 429
	KindServer      = "server"       // 5xx, or the endpoint cannot be reached
	KindBadRequest  = "bad_request"  // any other 4xx: the request itself is wrong
	KindStream      = "stream"       // cut, malformed or empty stream
	KindTimeout     = "timeout"      // the attempt ran out of time
	KindCancelled   = "cancelled"    // the caller cancelled
	KindConfig      = "config"       // no provider, model, key or script turn
)

// Error is the one error type the providers return. Message is a sentence
// for a human that says what to do; it never contains an API key.
type Error struct {
	Kind string
	// Status is the HTTP status when the server answered, else 0.
	Status int
	// RetryAfter is the server's Retry-After (or retry-after-ms), 0 if none.
	RetryAfter time.Duration
	Message    string

	cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap gives the underlying cause (context.Canceled, an SDK error…).
func (e *Error) Unwrap() error { return e.cause }

// Retryable reports whether another attempt may succeed: rate limits,
// server errors, broken streams and timeouts are; auth, bad requests,
// cancellations and configuration errors are not.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindRateLimited, KindServer, KindStream, KindTimeout:
		return true
	}
	return false
}

// Classify maps any error to an *Error: an *Error anywhere in the chain is
// returned as is; context cancellation is cancelled, a deadline is timeout,
// a network error before any answer is server (the endpoint is unreachable,
// retrying may help) and anything else is stream. Classify(nil) is nil.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &Error{Kind: KindCancelled, Message: "the request was cancelled", cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Message: "the request timed out: " + err.Error(), cause: err}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &Error{Kind: KindTimeout, Message: "the request timed out: " + err.Error(), cause: err}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return &Error{Kind: KindServer, Message: "cannot reach the model endpoint: " + err.Error() + " (is the server running and base_url right?)", cause: err}
	}
	return &Error{Kind: KindStream, Message: "the response stream broke: " + err.Error(), cause: err}
}

// statusError classifies an HTTP error answer. detail is the server's own
// message (may be empty); keyEnv is the environment variable the key came
// from, named in auth errors so the operator knows what to fix.
func statusError(status int, header http.Header, detail, keyEnv string, now time.Time) *Error {
	e := &Error{Status: status, RetryAfter: retryAfter(header, now)}
	suffix := ""
	if detail != "" {
		suffix = ": " + detail
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
		e.RetryAfter = 0
		who := "the API key"
		if keyEnv != "" {
			who = keyEnv
		}
		e.Message = fmt.Sprintf("%s is rejected (%d)%s; check the key's value and its access to the model", who, status, suffix)
	case status == http.StatusTooManyRequests:
		e.Kind = KindRateLimited
		e.Message = fmt.Sprintf("rate limited (429)%s", suffix)
	case status >= 500:
		e.Kind = KindServer
		e.Message = fmt.Sprintf("the model server failed (%d)%s", status, suffix)
	default:
		e.Kind = KindBadRequest
		e.RetryAfter = 0
		e.Message = fmt.Sprintf("the model server refused the request (%d)%s", status, suffix)
	}
	return e
}

// retryAfter reads retry-after-ms (milliseconds, OpenAI's and Anthropic's
// precise form) or else Retry-After (seconds or an HTTP-date, RFC 9110).
// Anything unreadable or negative is 0: no hint.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// configError is a Kind config error.
func configError(format string, args ...any) *Error {
	return &Error{Kind: KindConfig, Message: fmt.Sprintf(format, args...)}
}

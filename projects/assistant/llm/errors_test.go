package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryableKinds(t *testing.T) {
	want := map[string]bool{
		KindAuth: false, KindRateLimited: true, KindServer: true, KindBadRequest: false,
		KindStream: true, KindTimeout: true, KindCancelled: false, KindConfig: false,
	}
	for kind, retry := range want {
		if got := (&Error{Kind: kind}).Retryable(); got != retry {
			t.Errorf("Kind %s: Retryable() = %v, want %v", kind, got, retry)
		}
	}
}

func TestStatusError(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		status    int
		header    http.Header
		keyEnv    string
		kind      string
		retry     time.Duration
		mentioned string
	}{
		{401, nil, "OPENAI_API_KEY", KindAuth, 0, "OPENAI_API_KEY"},
		{403, nil, "MY_KEY", KindAuth, 0, "MY_KEY"},
		{429, http.Header{"Retry-After": {"7"}}, "", KindRateLimited, 7 * time.Second, "429"},
		{429, http.Header{"Retry-After": {now.Add(20 * time.Second).Format(http.TimeFormat)}}, "", KindRateLimited, 20 * time.Second, "429"},
		{429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, "", KindRateLimited, 1500 * time.Millisecond, "429"},
		{429, http.Header{"Retry-After": {"soon"}}, "", KindRateLimited, 0, "429"},
		{429, http.Header{"Retry-After": {"-3"}}, "", KindRateLimited, 0, "429"},
		{500, nil, "", KindServer, 0, "500"},
		{503, http.Header{"Retry-After": {"2"}}, "", KindServer, 2 * time.Second, "503"},
		{400, nil, "", KindBadRequest, 0, "400"},
		{404, nil, "", KindBadRequest, 0, "404"},
	}
	for _, c := range cases {
		e := statusError(c.status, c.header, "details here", c.keyEnv, now)
		if e.Kind != c.kind || e.Status != c.status || e.RetryAfter != c.retry {
			t.Errorf("status %d %v: got kind %s status %d retry %v, want %s %d %v", c.status, c.header, e.Kind, e.Status, e.RetryAfter, c.kind, c.status, c.retry)
		}
		if !strings.Contains(e.Message, c.mentioned) || !strings.Contains(e.Message, "details here") {
			t.Errorf("status %d: message %q should mention %q and the server's details", c.status, e.Message, c.mentioned)
		}
	}
}

func TestClassify(t *testing.T) {
	own := &Error{Kind: KindAuth, Message: "x"}
	cases := []struct {
		err  error
		kind string
	}{
		{own, KindAuth},
		{fmt.Errorf("wrapped: %w", own), KindAuth},
		{context.Canceled, KindCancelled},
		{fmt.Errorf("read: %w", context.Canceled), KindCancelled},
		{context.DeadlineExceeded, KindTimeout},
		{io.ErrUnexpectedEOF, KindStream},
		{errors.New("something odd"), KindStream},
	}
	for _, c := range cases {
		got := Classify(c.err)
		if got == nil || got.Kind != c.kind {
			t.Errorf("Classify(%v) = %+v, want kind %s", c.err, got, c.kind)
		}
	}
	if Classify(nil) != nil {
		t.Error("Classify(nil) should be nil")
	}
	if !errors.Is(Classify(context.Canceled), context.Canceled) {
		t.Error("a classified error should still match its cause with errors.Is")
	}
}

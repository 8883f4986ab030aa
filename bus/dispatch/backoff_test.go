package dispatch

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	const base, ceiling = 500 * time.Millisecond, 30 * time.Second
	cases := []struct {
		failures int
		r        float64
		want     time.Duration
	}{
		{1, 0, 250 * time.Millisecond},
		{1, 0.999999999, 500*time.Millisecond - 1},
		{2, 0, 500 * time.Millisecond},
		{3, 0.5, 1500 * time.Millisecond},
		{7, 0, 15 * time.Second}, // 32s capped to 30s
		{1000, 0, 15 * time.Second},
		{1000, 0.5, 22500 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := backoffDelay(tc.failures, base, ceiling, tc.r); got != tc.want {
			t.Errorf("backoffDelay(%d, r=%v) = %s, want %s", tc.failures, tc.r, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"12", 12 * time.Second, true},
		{" 3 ", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"99999999999999999999", 0, false}, // beyond uint64
		{"9999999999", maxBackoffLimit + time.Second, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		got, ok := retryAfter(h, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("retryAfter(%q) = %s, %v; want %s, %v", tc.value, got, ok, tc.want, tc.wantOK)
		}
	}
}

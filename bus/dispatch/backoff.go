package dispatch

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoffDelay returns how long to wait after the given number of failed
// attempts (1 or more): base doubled for each failure after the first,
// capped at ceiling, then jittered. r is a uniform random number in [0, 1).
//
// The jitter is "equal jitter": half the delay is kept and half is random.
// Random spreads the retries of many agents hit by the same outage; the
// fixed half keeps a retry from coming back at once.
func backoffDelay(failures int, base, ceiling time.Duration, r float64) time.Duration {
	d := base
	for i := 1; i < failures && d < ceiling; i++ {
		d *= 2 // no overflow: d < ceiling <= maxBackoffLimit before doubling
	}
	if d > ceiling {
		d = ceiling
	}
	half := d / 2
	return d - half + time.Duration(r*float64(half))
}

// retryAfter reads a Retry-After header (RFC 9110 section 10.2.3): a number
// of seconds, or an HTTP date taken relative to now. ok is false when the
// header is absent or unreadable; a date in the past gives 0.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		// Anything past the backoff limit ends the retries anyway; capping
		// here keeps the multiplication from overflowing.
		limit := uint64(maxBackoffLimit/time.Second) + 1
		return time.Duration(min(secs, limit)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

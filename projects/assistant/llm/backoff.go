package llm

import (
	"math"
	"time"
)

// Backoff bounds.
const (
	BackoffBase = 500 * time.Millisecond
	BackoffCap  = 30 * time.Second
)

// Backoff returns how long to wait before the attempt after attempt (the
// 1-based number of the attempt that just failed; values below 1 count as 1).
//
// It is exponential with equal jitter: the step is min(BackoffCap,
// BackoffBase·2^(attempt-1)) and the wait is step/2 + rnd()·step/2, so it
// always waits at least half the step (no thundering herd of zero waits) and
// at most the step. When the server said Retry-After, the wait is never
// shorter than that, even above BackoffCap: the server knows best.
//
// Backoff is pure: rnd supplies the jitter (a value in [0,1]; anything else,
// NaN included, is clamped), so a test or a replay can fix it.
func Backoff(attempt int, retryAfter time.Duration, rnd func() float64) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	step := BackoffCap
	// 2^6 · 500ms = 32s > cap, so any larger exponent is the cap too; this
	// also keeps the shift far from overflow.
	if attempt <= 6 {
		step = min(BackoffCap, BackoffBase<<(attempt-1))
	}
	r := rnd()
	if math.IsNaN(r) || r < 0 {
		r = 0
	} else if r > 1 {
		r = 1
	}
	d := step/2 + time.Duration(r*float64(step/2))
	return max(d, retryAfter)
}

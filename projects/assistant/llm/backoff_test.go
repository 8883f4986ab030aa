package llm

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestBackoffProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		attempt := rapid.IntRange(-3, 200).Draw(t, "attempt")
		retryAfter := time.Duration(rapid.Int64Range(0, int64(5*time.Minute)).Draw(t, "retryAfter"))
		r := rapid.Float64Range(0, 1).Draw(t, "rnd")
		d := Backoff(attempt, retryAfter, func() float64 { return r })
		if d < retryAfter {
			t.Fatalf("Backoff(%d, %v) = %v, less than Retry-After", attempt, retryAfter, d)
		}
		if retryAfter <= BackoffCap && d > BackoffCap {
			t.Fatalf("Backoff(%d, %v) = %v, above the cap %v", attempt, retryAfter, d, BackoffCap)
		}
		if retryAfter == 0 && d < BackoffBase/2 {
			t.Fatalf("Backoff(%d) = %v, below half the base: equal jitter keeps half the step", attempt, d)
		}
	})
}

func TestBackoffGrowsAndIsPure(t *testing.T) {
	one := func() float64 { return 1 }
	zero := func() float64 { return 0 }
	prev := time.Duration(0)
	for a := 1; a <= 20; a++ {
		d := Backoff(a, 0, one)
		if d < prev {
			t.Fatalf("attempt %d: %v < previous %v: the ceiling must not shrink", a, d, prev)
		}
		if d != Backoff(a, 0, one) {
			t.Fatal("same inputs gave different results")
		}
		prev = d
	}
	if got := Backoff(1, 0, one); got != BackoffBase {
		t.Errorf("attempt 1 with rnd=1: %v, want the base %v", got, BackoffBase)
	}
	if got := Backoff(1, 0, zero); got != BackoffBase/2 {
		t.Errorf("attempt 1 with rnd=0: %v, want half the base", got)
	}
	if got := Backoff(3, 0, one); got != 4*BackoffBase {
		t.Errorf("attempt 3 with rnd=1: %v, want 4×base", got)
	}
	if got := Backoff(50, 0, one); got != BackoffCap {
		t.Errorf("attempt 50: %v, want the cap", got)
	}
	if got := Backoff(1, time.Minute, zero); got != time.Minute {
		t.Errorf("Retry-After of a minute: %v, want a minute", got)
	}
	// A broken rnd (NaN, out of range) must not produce a negative or huge wait.
	for _, r := range []float64{-1, 2, nan()} {
		d := Backoff(2, 0, func() float64 { return r })
		if d < BackoffBase || d > 2*BackoffBase {
			t.Errorf("rnd %v: %v outside [base, 2×base]", r, d)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

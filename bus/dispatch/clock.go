package dispatch

import (
	"context"
	"time"
)

// Clock is the time source of a webhook target: Now stamps each attempt
// (the signed timestamp) and dates Retry-After headers; Sleep waits between
// attempts. Tests pass a fake one so that retries take no real time.
// A Clock must be safe for concurrent use.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or returns ctx.Err() as soon as ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the real Clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package jsplace

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var noPeers = &jetstream.APIError{Code: 400, ErrorCode: jsErrCodeNoPeers, Description: "no suitable peers for placement"}

// TestRetryWaitsOutAClusterStillForming: "no suitable peers" is asked
// again until the servers place; the creation's success is Retry's.
func TestRetryWaitsOutAClusterStillForming(t *testing.T) {
	calls := 0
	err := Retry(t.Context(), 3, func() error {
		if calls++; calls < 4 {
			return noPeers
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Fatalf("err %v after %d calls; want nil after 4", err, calls)
	}
}

// TestRetryReturnsOtherErrorsAtOnce: any other answer is final; a retry
// would only hide it.
func TestRetryReturnsOtherErrorsAtOnce(t *testing.T) {
	other := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamNameInUse, Description: "stream name already in use"}
	calls := 0
	err := Retry(t.Context(), 3, func() error { calls++; return other })
	if !errors.Is(err, other) || calls != 1 {
		t.Fatalf("err %v after %d calls; want the error itself after 1", err, calls)
	}
}

// TestRetryGivesUpWithWhatToCheck: when the wait ends unplaced, the error
// is still the servers' (errors.As finds it) and says what to check.
func TestRetryGivesUpWithWhatToCheck(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := Retry(ctx, 5, func() error {
		if calls++; calls == 2 {
			cancel()
		}
		return noPeers
	})
	if !IsNoPeers(err) {
		t.Fatalf("err %v: want the servers' no-peers error", err)
	}
	for _, want := range []string{"no suitable peers for placement", "fewer than 5 JetStream servers", "nats server report jetstream", "context canceled"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}

func TestIsNoPeers(t *testing.T) {
	if IsNoPeers(nil) || IsNoPeers(errors.New("no suitable peers for placement")) || !IsNoPeers(errors.Join(errors.New("x"), noPeers)) {
		t.Fatal("IsNoPeers must find the servers' error code, and only it")
	}
}

// TestRetryEndedDuringARequestSaysWhatTheServersSaid: a wait that ends
// while a creation is in flight reports the servers' last answer, not
// only the deadline.
func TestRetryEndedDuringARequestSaysWhatTheServersSaid(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := Retry(ctx, 3, func() error {
		if calls++; calls == 1 {
			return noPeers
		}
		cancel()
		return ctx.Err()
	})
	if !IsNoPeers(err) || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err %v: want the servers' no-peers error, and that the wait ended", err)
	}
}

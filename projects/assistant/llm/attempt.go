package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errAttemptTimeout is the cause of an attempt context that ran out of
// Config.Timeout, telling it apart from the caller's own deadline.
var errAttemptTimeout = errors.New("llm attempt timeout")

// attemptContext bounds one attempt by timeout (0: no bound of its own).
func attemptContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, errAttemptTimeout)
}

// contextFailure explains a failed attempt by its contexts when one of them
// ended: the caller cancelled (cancelled), the caller's deadline passed or
// the attempt ran out of its timeout (timeout). It is nil when neither ended,
// so the error itself says what happened.
func contextFailure(ctx, actx context.Context, timeout time.Duration, err error) *Error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return &Error{Kind: KindCancelled, Message: "the request was cancelled", cause: context.Canceled}
	case ctx.Err() != nil:
		return &Error{Kind: KindTimeout, Message: "the caller's deadline passed before the model finished", cause: ctx.Err()}
	case errors.Is(context.Cause(actx), errAttemptTimeout):
		return &Error{Kind: KindTimeout, Message: fmt.Sprintf("no complete answer within %v (llm timeout_ms): raise it or retry", timeout), cause: err}
	}
	return nil
}

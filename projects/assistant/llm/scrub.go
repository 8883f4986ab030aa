package llm

import (
	"context"
	"errors"
	"fmt"
)

// Scrubber hides the node's secrets in text (secrets.Set is one).
type Scrubber interface {
	// Scrub returns text with every secret replaced.
	Scrub(text string) string
	// Pending is how many bytes at the end of text may begin a secret
	// that the next streamed piece completes.
	Pending(text string) int
}

// Scrubbing returns p with every text that leaves its calls scrubbed by s:
// the error (its message, the server's own words included, is recorded in
// conversation.llm.failed, published and shown by the diagnostics), the
// answer and its tool calls, and the streamed pieces — a piece that ends
// with what may be the start of a secret is held back until the next one
// says, so a secret cut in two never goes out in halves. A server that
// echoes the key it was sent (some do, in a 401 or a 500) thus never puts
// it in the log.
func Scrubbing(p Provider, s Scrubber) Provider {
	return &scrubbing{inner: p, s: s}
}

type scrubbing struct {
	inner Provider
	s     Scrubber
}

// String, Format and MarshalJSON show the provider wrapped (its
// description, never its key).
func (p *scrubbing) String() string { return fmt.Sprint(p.inner) }

func (p *scrubbing) Format(f fmt.State, verb rune) {
	if fm, ok := p.inner.(fmt.Formatter); ok {
		fm.Format(f, verb)
		return
	}
	_, _ = fmt.Fprint(f, p.String())
}

func (p *scrubbing) MarshalJSON() ([]byte, error) {
	if d, ok := p.inner.(interface{ MarshalJSON() ([]byte, error) }); ok {
		return d.MarshalJSON()
	}
	return []byte(`{}`), nil
}

func (p *scrubbing) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	held := ""
	resp, err := p.inner.Complete(ctx, req, func(d Delta) {
		if !d.IsText() {
			d.ToolCallID, d.ToolName, d.ArgsPiece = p.s.Scrub(d.ToolCallID), p.s.Scrub(d.ToolName), p.s.Scrub(d.ArgsPiece)
			onDelta(d)
			return
		}
		text := p.s.Scrub(held + d.Text)
		n := p.s.Pending(text)
		held = text[len(text)-n:]
		if out := text[:len(text)-n]; out != "" {
			onDelta(Delta{Text: out})
		}
	})
	// What is still held began a secret the stream never finished: it is
	// not one.
	if held != "" {
		onDelta(Delta{Text: held})
	}
	resp.Text = p.s.Scrub(resp.Text)
	resp.Model, resp.StopReason = p.s.Scrub(resp.Model), p.s.Scrub(resp.StopReason)
	for i, tc := range resp.ToolCalls {
		resp.ToolCalls[i] = ToolCall{ID: p.s.Scrub(tc.ID), Name: p.s.Scrub(tc.Name), Args: p.s.Scrub(tc.Args)}
	}
	if err != nil {
		return resp, p.scrubError(err)
	}
	return resp, nil
}

// scrubError returns err as an *Error with its message scrubbed. The cause
// is dropped but for a context's end (errors.Is still tells a cancel): its
// text is the server's, unscrubbed, and whoever prints the chain would
// print it.
func (p *scrubbing) scrubError(err error) *Error {
	e := *Classify(err)
	e.Message = p.s.Scrub(e.Message)
	switch {
	case errors.Is(err, context.Canceled):
		e.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		e.cause = context.DeadlineExceeded
	default:
		e.cause = nil
	}
	return &e
}

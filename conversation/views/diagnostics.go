package views

import (
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projections"
)

// Diagnostics is what a debugger wants of a conversation: counts, errors,
// retries, token usage and timings.
type Diagnostics struct {
	Events int            `json:"events"`
	ByType map[string]int `json:"by_type"`
	// Invalid counts events whose data did not decode (skipped by every
	// read model).
	Invalid int `json:"invalid,omitempty"`
	// Errors lists every failure in order: LLM and tool failures, timeouts.
	Errors []DiagError `json:"errors"`

	// LLMCalls counts LLM attempts (conversation.llm.requested), retries
	// included.
	LLMCalls    int `json:"llm_calls"`
	LLMFailures int `json:"llm_failures"`
	// LLMFailuresByType counts LLM failures by error type (rate_limited,
	// server, stream, interrupted ...).
	LLMFailuresByType map[string]int `json:"llm_failures_by_type,omitempty"`
	// Retries counts LLM calls requested with attempt above 1.
	Retries int `json:"retries"`
	// RetryWaitMS sums the delays failed attempts announced before their
	// retry (retry_in_ms).
	RetryWaitMS int64 `json:"retry_wait_ms,omitempty"`

	// Approvals counts the approvals asked and their answers.
	Approvals ApprovalCounts `json:"approvals"`

	ToolCalls     int `json:"tool_calls"`
	ToolFailures  int `json:"tool_failures"`
	ToolTimeouts  int `json:"tool_timeouts"`
	ToolCancelled int `json:"tool_cancelled"`
	// Interrupted counts tool and LLM calls failed as interrupted by a
	// restart, resume or fork.
	Interrupted int `json:"interrupted"`

	Usage        conversation.Usage            `json:"usage"`
	UsageByModel map[string]conversation.Usage `json:"usage_by_model,omitempty"`
	// CostUSD sums the cost_usd of the LLM calls (those of a model the
	// operator priced), CostByModel by model.
	CostUSD     float64            `json:"cost_usd,omitempty"`
	CostByModel map[string]float64 `json:"cost_by_model,omitempty"`

	// Timings, in milliseconds, as the events report them.
	LLMLatency   Timing `json:"llm_latency_ms"`
	ToolDuration Timing `json:"tool_duration_ms"`

	FirstEventAt time.Time `json:"first_event_at"`
	LastEventAt  time.Time `json:"last_event_at"`
}

// ApprovalCounts counts conversation.tool.approval.requested and the
// decisions: Denied includes TimedOut (the automatic deny, reason
// timeout), Approved includes Remembered (remember "conversation").
type ApprovalCounts struct {
	Requested  int `json:"requested"`
	Approved   int `json:"approved"`
	Remembered int `json:"remembered"`
	Denied     int `json:"denied"`
	TimedOut   int `json:"timed_out"`
}

// DiagError is one failure.
type DiagError struct {
	Seq    uint64    `json:"seq"`
	Type   string    `json:"type"` // the event type
	CallID string    `json:"call_id,omitempty"`
	Error  bus.Error `json:"error"`
}

// Timing sums durations in milliseconds.
type Timing struct {
	Count   int   `json:"count"`
	TotalMS int64 `json:"total"`
	MaxMS   int64 `json:"max"`
}

func (t *Timing) add(ms int64) {
	t.Count++
	t.TotalMS += ms
	t.MaxMS = max(t.MaxMS, ms)
}

// DiagnosticsProjection folds conversation events into Diagnostics.
type DiagnosticsProjection struct{}

func (DiagnosticsProjection) Name() string                   { return ViewDiagnostics }
func (DiagnosticsProjection) Version() string                { return "3" }
func (DiagnosticsProjection) Selector() projections.Selector { return selector }
func (DiagnosticsProjection) Init() *Diagnostics {
	return &Diagnostics{ByType: map[string]int{}, Errors: []DiagError{}}
}

// Apply implements projections.Projection.
func (DiagnosticsProjection) Apply(g *Diagnostics, e *projections.Entry) *Diagnostics {
	g.fold(decoded.Of(e))
	return g
}

// fold applies one event to g.
func (g *Diagnostics) fold(ev *Event) {
	g.Events++
	g.ByType[ev.Type]++
	if g.FirstEventAt.IsZero() {
		g.FirstEventAt = ev.Time
	}
	g.LastEventAt = ev.Time
	if ev.Invalid != "" {
		g.Invalid++
		return
	}
	d := &ev.Data
	switch ev.Type {
	case conversation.LLMRequested:
		g.LLMCalls++
		if d.Attempt > 1 {
			g.Retries++
		}
	case conversation.LLMCompleted:
		if d.Usage != nil {
			g.Usage.InputTokens += d.Usage.InputTokens
			g.Usage.OutputTokens += d.Usage.OutputTokens
			if d.Model != "" {
				if g.UsageByModel == nil {
					g.UsageByModel = map[string]conversation.Usage{}
				}
				u := g.UsageByModel[d.Model]
				u.InputTokens += d.Usage.InputTokens
				u.OutputTokens += d.Usage.OutputTokens
				g.UsageByModel[d.Model] = u
			}
		}
		if d.CostUSD > 0 {
			g.CostUSD = conversation.AddUSD(g.CostUSD, d.CostUSD)
			if d.Model != "" {
				if g.CostByModel == nil {
					g.CostByModel = map[string]float64{}
				}
				g.CostByModel[d.Model] = conversation.AddUSD(g.CostByModel[d.Model], d.CostUSD)
			}
		}
		g.LLMLatency.add(d.LatencyMS)
	case conversation.LLMFailed:
		g.LLMFailures++
		g.failure(ev, d.Error)
		if g.LLMFailuresByType == nil {
			g.LLMFailuresByType = map[string]int{}
		}
		g.LLMFailuresByType[g.Errors[len(g.Errors)-1].Error.Type]++
		g.RetryWaitMS += max(d.RetryInMS, 0)
		if d.LatencyMS > 0 {
			g.LLMLatency.add(d.LatencyMS)
		}
	case conversation.ToolRequested:
		g.ToolCalls++
	case conversation.ToolCompleted:
		if d.DurationMS > 0 {
			g.ToolDuration.add(d.DurationMS)
		}
	case conversation.ToolFailed:
		g.ToolFailures++
		g.failure(ev, d.Error)
		if d.DurationMS > 0 {
			g.ToolDuration.add(d.DurationMS)
		}
	case conversation.ToolTimeout:
		g.ToolTimeouts++
		g.failure(ev, bus.Errorf("timeout", "no outcome within %d ms", d.TimeoutMS))
	case conversation.ToolCancelled:
		g.ToolCancelled++
	case conversation.ToolApprovalRequested:
		g.Approvals.Requested++
	case conversation.ToolApproval:
		switch d.Decision {
		case conversation.DecisionApprove:
			g.Approvals.Approved++
			if d.Remember != "" {
				g.Approvals.Remembered++
			}
		case conversation.DecisionDeny:
			g.Approvals.Denied++
			if d.Reason == conversation.ApprovalTimeoutReason {
				g.Approvals.TimedOut++
			}
		}
	}
}

func (g *Diagnostics) failure(ev *Event, err *bus.Error) {
	if err == nil {
		err = &bus.Error{Type: bus.ReasonInternal, Message: "no error given"}
	}
	if err.Type == conversation.ReasonInterrupted {
		g.Interrupted++
	}
	g.Errors = append(g.Errors, DiagError{Seq: ev.Seq, Type: ev.Type, CallID: ev.Data.CallID, Error: *err})
}

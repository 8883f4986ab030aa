package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// chatData is what conv chat reads of a conversation event's data.
type chatData struct {
	Text      string          `json:"text"`
	ToolCalls *int            `json:"tool_calls"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	ArgsError string          `json:"args_error"`
	Output    json.RawMessage `json:"output"`
	OutputRef *struct {
		Size int64 `json:"size"`
	} `json:"output_ref"`
	Error     *bus.Error `json:"error"`
	RetryInMS *int64     `json:"retry_in_ms"`
	Reason    string     `json:"reason"`
	Decision  string     `json:"decision"`
	By        string     `json:"by"`
	TimeoutMS int64      `json:"timeout_ms"`
}

// chatEvent is one conversation event as conv chat handles it: live from
// NATS, or rebuilt from the timeline (history, and what a reconnect
// missed).
type chatEvent struct {
	// seq is the event's stream sequence (Jido-Seq); 0 for a delta, which
	// is never logged, or an event from a node that does not number them.
	seq  uint64
	typ  string
	id   string
	data chatData
	// request is the LLM call an assistant delta or message belongs to
	// (the event's causation id); "" for one rebuilt from the timeline.
	request string
	// history: rebuilt from the timeline, which does not say whether an
	// answer had tool calls; such an answer does not end a turn by
	// itself (the status view says when a turn has ended).
	history bool
	// mine: a user message this session sent (the terminal echoed it).
	mine bool
}

// chatView renders conversation events as conv chat prints them. It is
// pure: it remembers what the deltas of each LLM call printed, so that the
// message that follows prints only what was not streamed — an answer is
// never printed twice, whatever order deltas and committed events come in.
type chatView struct {
	open      bool              // streamed text has not ended its line
	streaming string            // the call whose deltas that line holds
	streamed  map[string]string // call → the text its deltas printed
	// awaiting are the calls whose approval was asked and not answered:
	// a decision on another (the timeout's deny of a call approved
	// already, which the conversation ignores) is not shown.
	awaiting map[string]bool
}

// render returns what to print for ev.
func (v *chatView) render(ev chatEvent) string {
	if v.streamed == nil {
		v.streamed, v.awaiting = map[string]string{}, map[string]bool{}
	}
	d := ev.data
	switch ev.typ {
	case conversation.AssistantDelta:
		if d.Text == "" {
			return ""
		}
		out := ""
		if v.open && v.streaming != ev.request {
			out = "\n" // another call's text
		}
		v.open, v.streaming = true, ev.request
		v.streamed[ev.request] += d.Text
		return out + d.Text
	case conversation.AssistantMessage:
		shown := v.streamed[ev.request]
		if ev.history {
			shown = "" // a past answer: what streams now is another's
		} else {
			delete(v.streamed, ev.request)
		}
		n := commonPrefix(shown, d.Text)
		rest := d.Text[n:]
		if n > 0 && n == len(shown) && v.open && v.streaming == ev.request && !ev.history {
			// The stream's line is the last thing printed: the rest of
			// the text, if any, ends it.
			v.open = false
			return rest + "\n"
		}
		if rest == "" {
			return v.endLine()
		}
		return v.endLine() + rest + "\n"
	case conversation.ToolApprovalRequested:
		v.awaiting[d.CallID] = true
		return "" // asked by the session, as a question
	case conversation.ToolApproval:
		if !v.awaiting[d.CallID] {
			return "" // not asked, or answered already: the conversation ignores it
		}
		delete(v.awaiting, d.CallID)
	}
	out := v.line(ev)
	if out == "" {
		return ""
	}
	return v.endLine() + out
}

// endLine ends the streamed text's line, if one is open.
func (v *chatView) endLine() string {
	if !v.open {
		return ""
	}
	v.open = false
	return "\n"
}

func (v *chatView) line(ev chatEvent) string {
	d := ev.data
	switch ev.typ {
	case conversation.UserMessage:
		if ev.mine {
			return ""
		}
		return "> " + d.Text + "\n"
	case conversation.ToolRequested:
		if d.ArgsError != "" {
			return fmt.Sprintf("→ %s (arguments are not JSON: %s)\n", d.Name, d.ArgsError)
		}
		return fmt.Sprintf("→ %s %s\n", d.Name, shortJSON(d.Args, 80))
	case conversation.ToolCompleted:
		size := int64(len(d.Output))
		if d.OutputRef != nil {
			size = d.OutputRef.Size
		}
		return "← ok " + humanBytes(size) + "\n"
	case conversation.ToolFailed:
		return "← error " + errorText(d.Error) + "\n"
	case conversation.ToolTimeout:
		return "← timeout\n"
	case conversation.ToolCancelled:
		return "← cancelled\n"
	case conversation.ToolApproval:
		if d.Decision == conversation.DecisionDeny {
			return "✗ denied" + chatSuffix(d.Reason, d.By) + "\n"
		}
		return "✓ approved" + chatSuffix(d.Reason, d.By) + "\n"
	case conversation.LLMFailed:
		if d.Error != nil && d.Error.Type == conversation.ReasonInterrupted {
			return "(the answer was interrupted: " + d.Error.Message + "; asking the model again)\n"
		}
		if d.RetryInMS != nil {
			return fmt.Sprintf("(model error %s; retrying in %s)\n", errorText(d.Error), humanMillis(*d.RetryInMS))
		}
		return "model error " + errorText(d.Error) + "\n"
	case conversation.Cancel:
		return "(cancelled" + chatSuffix(d.Reason, "") + ")\n"
	case conversation.Stopped:
		return "(the conversation has stopped" + chatSuffix(d.Reason, "") + ")\n"
	case conversation.BudgetExceeded:
		return "(" + cmp.Or(d.Reason, "the conversation's budget is spent") + ")\n"
	}
	return ""
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// approvalQuestion is the inline question for a call awaiting approval,
// with what happens when nobody answers.
func approvalQuestion(d chatData) string {
	q := fmt.Sprintf("approve %s %s", d.Name, shortJSON(d.Args, 80))
	var why []string
	if d.Reason != "" {
		why = append(why, d.Reason)
	}
	if d.TimeoutMS > 0 {
		why = append(why, "denied unless answered within "+(time.Duration(d.TimeoutMS)*time.Millisecond).String())
	}
	if len(why) > 0 {
		q += " (" + strings.Join(why, "; ") + ")"
	}
	return q + "? [y/N/a(lways)] "
}

// turnEnds reports whether an event ends the turn conv chat waits for:
// an answer without tool calls, a model failure not retried, a cancel,
// the conversation stopping, its budget spent.
func turnEnds(ev chatEvent) bool {
	d := ev.data
	switch ev.typ {
	case conversation.AssistantMessage:
		return !ev.history && (d.ToolCalls == nil || *d.ToolCalls == 0)
	case conversation.LLMFailed:
		// An interrupted call (a node restart) is made again at once.
		return d.RetryInMS == nil && (d.Error == nil || d.Error.Type != conversation.ReasonInterrupted)
	case conversation.Cancel, conversation.Stopped:
		return true
	case conversation.BudgetExceeded:
		// A message sent after the budget is spent gets this and no answer.
		return !ev.history
	}
	return false
}

func errorText(e *bus.Error) string {
	if e == nil {
		return "(no detail)"
	}
	if e.Message == "" {
		return e.Type
	}
	return e.Type + ": " + e.Message
}

func chatSuffix(reason, by string) string {
	var parts []string
	if reason != "" {
		parts = append(parts, reason)
	}
	if by != "" {
		parts = append(parts, "by "+by)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// shortJSON is raw on one line (compactJSON), cut to max runes with "…";
// absent arguments print as {}.
func shortJSON(raw json.RawMessage, max int) string {
	if len(raw) == 0 {
		return "{}"
	}
	s := compactJSON(raw)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

func humanMillis(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

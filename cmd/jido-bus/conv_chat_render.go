package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
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
}

// chatView renders conversation events as conv chat prints them. It is
// pure: it only remembers what the deltas printed of the answer to come.
type chatView struct {
	open     bool // streamed assistant text has not ended its line
	streamed bool // the coming assistant message's text came as deltas
}

// render returns what to print for an event of type typ.
func (v *chatView) render(typ string, d chatData) string {
	if typ == convevent.AssistantDelta {
		if d.Text != "" {
			v.open, v.streamed = true, true
		}
		return d.Text
	}
	if typ == convevent.AssistantMessage && v.streamed {
		// The text came as deltas already (the tool calls of the answer
		// may have come between): only its line ends, if open.
		v.streamed = false
		if v.open {
			v.open = false
			return "\n"
		}
		return ""
	}
	if typ == convevent.LLMRequested || typ == convevent.LLMFailed {
		v.streamed = false // what streamed belongs to an attempt that is over
	}
	out := v.line(typ, d)
	if out != "" && v.open {
		v.open = false
		out = "\n" + out
	}
	return out
}

func (v *chatView) line(typ string, d chatData) string {
	switch typ {
	case convevent.AssistantMessage:
		if d.Text == "" {
			return ""
		}
		return d.Text + "\n"
	case convevent.ToolRequested:
		if d.ArgsError != "" {
			return fmt.Sprintf("→ %s (arguments are not JSON: %s)\n", d.Name, d.ArgsError)
		}
		return fmt.Sprintf("→ %s %s\n", d.Name, shortJSON(d.Args, 80))
	case convevent.ToolCompleted:
		size := int64(len(d.Output))
		if d.OutputRef != nil {
			size = d.OutputRef.Size
		}
		return "← ok " + humanBytes(size) + "\n"
	case convevent.ToolFailed:
		return "← error " + errorText(d.Error) + "\n"
	case convevent.ToolTimeout:
		return "← timeout\n"
	case convevent.ToolCancelled:
		return "← cancelled\n"
	case convevent.ToolApproval:
		if d.Decision == "deny" {
			return "✗ denied" + chatSuffix(d.Reason, d.By) + "\n"
		}
		return "✓ approved" + chatSuffix(d.Reason, d.By) + "\n"
	case convevent.LLMFailed:
		if d.RetryInMS != nil {
			return fmt.Sprintf("(model error %s; retrying in %s)\n", errorText(d.Error), humanMillis(*d.RetryInMS))
		}
		return "model error " + errorText(d.Error) + "\n"
	case convevent.Cancel:
		return "(cancelled" + chatSuffix(d.Reason, "") + ")\n"
	case convevent.Stopped:
		return "(the conversation has stopped" + chatSuffix(d.Reason, "") + ")\n"
	}
	return ""
}

// approvalQuestion is the inline question for a call awaiting approval.
func approvalQuestion(d chatData) string {
	q := fmt.Sprintf("approve %s %s", d.Name, shortJSON(d.Args, 80))
	if d.Reason != "" {
		q += " (" + d.Reason + ")"
	}
	return q + "? [y/N/a(lways)] "
}

// turnEnds reports whether an event ends the turn conv chat waits for:
// an answer without tool calls, a model failure not retried, a cancel,
// the conversation stopping.
func turnEnds(typ string, d chatData) bool {
	switch typ {
	case convevent.AssistantMessage:
		return d.ToolCalls == nil || *d.ToolCalls == 0
	case convevent.LLMFailed:
		// An interrupted call (a node restart) is made again at once.
		return d.RetryInMS == nil && (d.Error == nil || d.Error.Type != convevent.ReasonInterrupted)
	case convevent.Cancel, convevent.Stopped:
		return true
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

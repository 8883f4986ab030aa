package conversation

import (
	"encoding/json"
	"fmt"
)

// CompactAtPercent is how full the context may get, in percent of the
// model's window, before the loop compacts it: the turn's next LLM call
// waits for a summary of the older messages. The margin leaves room for
// the answer and for the tool results the estimate has not seen yet.
const CompactAtPercent = 80

// CompactKeepPercent is how much of the window the most recent messages
// may keep, in percent, when the loop compacts on its own: they go to
// the model as they are, the older ones as the summary.
const CompactKeepPercent = 25

// Compaction reasons (Compact.Reason).
const (
	CompactWindow = "window"
	CompactAsk    = "asked"
)

// SummaryInstruction is the system prompt of a compaction's LLM call.
const SummaryInstruction = "You are compacting the history of a conversation between a user and a coding assistant so that it can go on within the model's context window. " +
	"Write a summary that replaces the transcript below for the assistant: what the user asked and decided, what was done (files read and changed, commands run and their outcome), what was found, what failed, and what remains to do. " +
	"Keep names, paths, identifiers, numbers and errors exactly; leave out pleasantries. The first task of the conversation is kept beside the summary; do not repeat it word for word. Answer with the summary only."

// compactState is the loop's record of compaction.
type compactState struct {
	// Window is the model's context window as the last
	// conversation.llm.requested recorded it (0: never told; the loop
	// then never compacts on its own, as before compaction existed).
	Window int64 `json:"window,omitempty"`
	// Tokens estimates the context the next LLM call sends: the
	// provider's reported usage of the last call (input and output)
	// where it has it, the executor's estimate otherwise, plus a quarter
	// of the bytes of every message event since.
	Tokens int64 `json:"tokens,omitempty"`
	// Request is the compaction in flight (its Compact request id).
	Request string `json:"request,omitempty"`
	// Resume: the turn's LLM call waits for the compaction in flight.
	Resume bool `json:"resume,omitempty"`
	// Asked is a conversation.compact that came during a turn: the
	// turn's next LLM call compacts first.
	Asked string `json:"asked,omitempty"`
	// Failed is the turn whose compaction failed: it is not tried again
	// on its own before the next turn.
	Failed string `json:"failed,omitempty"`
}

// compactData holds what the loop reads of the compaction events and of
// conversation.llm.requested.
type compactData struct {
	Window        int64  `json:"window"`
	ContextTokens int64  `json:"context_tokens"`
	TokensAfter   int64  `json:"tokens_after"`
	Usage         *Usage `json:"usage"`
}

// compactEvent folds the events compaction depends on; it reports
// whether the event is handled (nothing else to decide).
func (d *decider) compactEvent(whole json.RawMessage) bool {
	st, ev := d.st, d.ev
	cs := &st.Compact
	var data compactData
	switch ev.Type {
	case LLMRequested, Compacted, CompactionFailed, LLMCompleted:
		var e struct {
			Data compactData `json:"data"`
		}
		_ = json.Unmarshal(whole, &e) // the loop read it already
		data = e.Data
	}
	switch ev.Type {
	case LLMRequested:
		if ev.ID == st.Request && data.Window > 0 {
			cs.Window, cs.Tokens = data.Window, data.ContextTokens
		}
	case LLMCompleted:
		if cs.Window > 0 && d.current() {
			if u := data.Usage; u != nil && u.InputTokens+u.OutputTokens > 0 {
				cs.Tokens = u.InputTokens + u.OutputTokens
			} else {
				cs.Tokens += int64(len(whole) / 4)
			}
		}
	case UserMessage, AssistantMessage, ToolCompleted, ToolFailed, ToolCancelled, ToolTimeout:
		if cs.Window > 0 && ev.Type != AssistantMessage {
			cs.Tokens += int64(len(whole) / 4)
		}
		if ev.Type == UserMessage && cs.Request != "" && d.status != "stopped" {
			// Between turns, a compaction in flight holds the message: it
			// starts its turn once the context is compacted.
			if st.Turn == "" {
				st.Queued = ev.ID
				return true
			}
		}
	case CompactAsked:
		switch {
		case d.status == "stopped" || cs.Request != "":
		case st.Turn == "":
			d.compact(CompactAsk, "compact."+ev.ID)
		default:
			cs.Asked = ev.ID
		}
		return true
	case Compacted, CompactionFailed:
		if cs.Request == "" || ev.CausationID != cs.Request {
			return true
		}
		if ev.Type == Compacted {
			d.spend()
			if data.TokensAfter > 0 {
				cs.Tokens = data.TokensAfter
			}
		} else if st.Turn != "" {
			cs.Failed = st.Turn
		}
		cs.Request = ""
		switch {
		case cs.Resume:
			cs.Resume = false
			if d.budgetReached() {
				// The summary spent what was left: the turn ends as any
				// call that spends the budget ends it.
				d.budgetRecord("budget."+st.Turn, ev.ID)
				d.endTurn()
				return true
			}
			d.llmCall(1, 0)
		case st.Turn == "" && st.Queued != "":
			queued := st.Queued
			st.Queued = ""
			d.startTurn(queued)
		}
		return true
	}
	return false
}

// compactFirst reports whether the turn's next LLM call waits for a
// compaction, and decides it: one was asked during the turn, or the
// context nears the model's window (and no compaction failed this turn).
func (d *decider) compactFirst() bool {
	st := d.st
	cs := &st.Compact
	if cs.Request != "" {
		cs.Resume = true
		return true
	}
	switch {
	case cs.Asked != "":
		asked := cs.Asked
		cs.Asked = ""
		d.compact(CompactAsk, "compact."+asked)
	case cs.Window > 0 && cs.Tokens*100 >= cs.Window*CompactAtPercent && cs.Failed != st.Turn:
		d.compact(CompactWindow, fmt.Sprintf("compact.%s.%d", st.Turn, st.Step))
	default:
		return false
	}
	cs.Resume = true
	return true
}

// compact decides a compaction: the model is asked for a summary.
func (d *decider) compact(reason, id string) {
	cs := &d.st.Compact
	cs.Request = id
	// Asked, it keeps the last turn only; on its own, the most recent
	// quarter of the window too.
	keep := int64(0)
	if reason == CompactWindow {
		keep = cs.Window * CompactKeepPercent / 100
	}
	d.out = append(d.out, Compact{Conversation: d.key, Request: id, Instruction: SummaryInstruction, KeepTokens: keep, Reason: reason, LLM: d.st.LLM})
}

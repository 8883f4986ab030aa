package main

import (
	"slices"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// historyEvents turns timeline items into the events conv chat prints, in
// stream order: a tool call item is its request at its seq and its
// outcome at the outcome's seq. conv chat shows a conversation's history
// and what a reconnect missed this way, through the one renderer that
// prints live events, and the sequences let it skip what it printed
// already.
func historyEvents(items []views.TimelineItem) []chatEvent {
	var out []chatEvent
	add := func(seq uint64, typ string, d chatData) {
		out = append(out, chatEvent{seq: seq, typ: typ, data: d, history: true})
	}
	for _, it := range items {
		switch it.Kind {
		case views.ItemUser:
			add(it.Seq, conversation.UserMessage, chatData{Text: it.Text})
		case views.ItemAssistant:
			add(it.Seq, conversation.AssistantMessage, chatData{Text: it.Text})
		case views.ItemToolCall:
			c := it.Tool
			if c.Name != "" {
				add(it.Seq, conversation.ToolRequested, chatData{CallID: c.CallID, Name: c.Name, Args: c.Args, ArgsError: c.ArgsError})
			}
			if c.ResultSeq == 0 {
				continue
			}
			d := chatData{CallID: c.CallID, Output: c.Output, Error: c.Error, Reason: c.Reason}
			if c.OutputRef != nil {
				d.OutputRef = &struct {
					Size int64 `json:"size"`
				}{c.OutputRef.Size}
			}
			if typ := toolOutcome(c.State); typ != "" {
				add(c.ResultSeq, typ, d)
			}
		case views.ItemLLMError:
			d := chatData{Error: it.Error}
			if it.LLM != nil && (it.LLM.RetryInMS > 0 || it.LLM.Retryable) {
				retry := it.LLM.RetryInMS
				d.RetryInMS = &retry
			}
			add(it.Seq, conversation.LLMFailed, d)
		case views.ItemApproval:
			a := it.Approval
			add(it.Seq, conversation.ToolApprovalRequested, chatData{CallID: a.CallID, Name: a.Name, Args: a.Args, Reason: a.Reason, TimeoutMS: a.TimeoutMS})
		case views.ItemDecision:
			a := it.Approval
			add(it.Seq, conversation.ToolApproval, chatData{CallID: a.CallID, Decision: a.Decision, By: a.By, Reason: a.Reason})
		case views.ItemCancel:
			add(it.Seq, conversation.Cancel, chatData{Reason: it.Text})
		case views.ItemStopped:
			add(it.Seq, conversation.Stopped, chatData{Reason: it.Text})
		case views.ItemBudget:
			add(it.Seq, conversation.BudgetExceeded, chatData{Reason: it.Text})
		}
	}
	slices.SortStableFunc(out, func(a, b chatEvent) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	return out
}

// toolOutcome is the event that gave a tool call its final state, or "".
func toolOutcome(state string) string {
	switch state {
	case views.ToolCompleted:
		return conversation.ToolCompleted
	case views.ToolFailed:
		return conversation.ToolFailed
	case views.ToolCancelled:
		return conversation.ToolCancelled
	case views.ToolTimedOut:
		return conversation.ToolTimeout
	}
	return ""
}

package views

// NoResult is the content of a tool result Request makes up for a call
// the log holds no result of.
const NoResult = "no result was recorded for this call"

// Request is the messages the next LLM call sends: Messages, then the
// held user messages, in the order every provider accepts (see
// ProviderOrder). It is a new slice; c is not changed.
func (c *LLMContext) Request() []Message {
	msgs := make([]Message, 0, len(c.Messages)+len(c.Held))
	msgs = append(msgs, c.Messages...)
	msgs = append(msgs, c.Held...)
	return ProviderOrder(msgs)
}

// ProviderOrder returns msgs in the order providers require, whatever
// order a log put them in: each assistant message's tool calls are
// answered by tool messages right after it, one per call in the order it
// made them, and nothing comes between. A result found later in the list
// is moved up to its call; a call without one gets a result saying so
// (NoResult); a tool message whose call no earlier assistant message makes
// is left out. Every other message keeps its place relative to the
// others. OpenAI-compatible servers answer 400 to any other order, and
// since each request sends the whole history, one misplaced message would
// fail every later turn.
func ProviderOrder(msgs []Message) []Message {
	// results are the positions of each call's results, in list order.
	results := map[string][]int{}
	for i := range msgs {
		if m := &msgs[i]; m.Role == RoleTool {
			results[m.ToolCallID] = append(results[m.ToolCallID], i)
		}
	}
	used := make([]bool, len(msgs))
	out := make([]Message, 0, len(msgs))
	for i := range msgs {
		m := msgs[i]
		if m.Role == RoleTool {
			continue // placed after its call, or left out
		}
		out = append(out, m)
		for _, tc := range m.ToolCalls {
			out = append(out, resultOf(msgs, results[tc.ID], i, used, tc.ID))
		}
	}
	return out
}

// resultOf is the first result after position after at one of at that no
// call took yet, or a made-up one.
func resultOf(msgs []Message, at []int, after int, used []bool, id string) Message {
	for _, j := range at {
		if j > after && !used[j] {
			used[j] = true
			return msgs[j]
		}
	}
	m := Message{Role: RoleTool, ToolCallID: id, Content: NoResult}
	m.Tokens = EstimateTokens(&m)
	return m
}

package conversation

import (
	"strconv"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/internal/jsonenc"
)

// The loop's directives write their own log form (agents.LogFormAppender):
// the runtime encodes every directive of every step, and encoding/json
// reflected over each of them (and, for a Record, called the sdk's
// MarshalJSON and compacted its output again). Each method writes what
// encoding/json writes for the type's tags; a value with a member it does
// not write (an LLMConfig, a tool list, a budget) declines, and
// encoding/json writes that one. TestDirectivesLogForm holds the two to
// the same bytes.

func appendMember(b []byte, name string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func appendStringMember(b []byte, name, v string) []byte {
	return jsonenc.AppendString(appendMember(b, name), v)
}

// AppendLogForm writes the log form's members (agents.LogFormAppender).
func (c LLMCall) AppendLogForm(b []byte) ([]byte, bool) {
	if c.LLM != nil || c.Tools != nil {
		return b, false
	}
	b = appendStringMember(b, "conversation", c.Conversation)
	b = appendStringMember(b, "request", c.Request)
	b = strconv.AppendInt(appendMember(b, "step"), int64(c.Step), 10)
	b = strconv.AppendInt(appendMember(b, "attempt"), int64(c.Attempt), 10)
	if c.DelayMS != 0 {
		b = strconv.AppendInt(appendMember(b, "delay_ms"), c.DelayMS, 10)
	}
	if c.Hooked {
		b = append(appendMember(b, "hooked"), "true"...)
	}
	return b, true
}

// AppendLogForm writes the log form's members (agents.LogFormAppender).
func (r RunTool) AppendLogForm(b []byte) ([]byte, bool) {
	if r.Budget != nil {
		return b, false
	}
	b = appendStringMember(b, "conversation", r.Conversation)
	b = appendStringMember(b, "call_id", r.CallID)
	b = appendStringMember(b, "name", r.Name)
	if len(r.Args) > 0 {
		var ok bool
		if b, ok = jsonenc.AppendRaw(appendMember(b, "args"), r.Args); !ok {
			return b, false
		}
	}
	if r.Approved {
		b = append(appendMember(b, "approved"), "true"...)
	}
	if r.Mode != "" {
		b = appendStringMember(b, "mode", r.Mode)
	}
	if r.Hooked {
		b = append(appendMember(b, "hooked"), "true"...)
	}
	return b, true
}

// AppendLogForm writes the log form's members (agents.LogFormAppender).
func (r Record) AppendLogForm(b []byte) ([]byte, bool) {
	return agents.AppendSignalJSON(appendMember(b, "event"), &r.Event)
}

// AppendLogForm writes the log form's members (agents.LogFormAppender).
func (c CancelTurn) AppendLogForm(b []byte) ([]byte, bool) {
	b = appendStringMember(b, "conversation", c.Conversation)
	if c.Reason != "" {
		b = appendStringMember(b, "reason", c.Reason)
	}
	return b, true
}

// AppendLogForm writes the log form's members (agents.LogFormAppender).
func (c Compact) AppendLogForm(b []byte) ([]byte, bool) {
	if c.LLM != nil {
		return b, false
	}
	b = appendStringMember(b, "conversation", c.Conversation)
	b = appendStringMember(b, "request", c.Request)
	b = appendStringMember(b, "instruction", c.Instruction)
	if c.KeepTokens != 0 {
		b = strconv.AppendInt(appendMember(b, "keep_tokens"), c.KeepTokens, 10)
	}
	b = appendStringMember(b, "reason", c.Reason)
	return b, true
}

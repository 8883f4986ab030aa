package views

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/jido-bus/jido-bus/internal/jsonenc"
)

// Hand-written encoders of the largest states (Timeline, LLMContext): a
// Runner encodes every changed state at each checkpoint, and encoding/json
// spent most of a rebuild's checkpoint time on them. Each produces exactly
// the bytes json.Marshal does (jsonenc_test.go checks that, on the golden
// states and on random ones) or reports false, and then the Runner uses
// json.Marshal. Rare parts (errors, artifact references) go through
// json.Marshal, whose output for a field's value is the same as for the
// value alone.

// AppendJSON implements projections.JSONAppender.
func (t *Timeline) AppendJSON(dst []byte) ([]byte, bool) {
	if t == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, `{"items":`...)
	if t.Items == nil {
		dst = append(dst, "null"...)
		if t.Dropped != 0 {
			dst = append(dst, `,"dropped":`...)
			dst = strconv.AppendInt(dst, int64(t.Dropped), 10)
		}
		return append(dst, '}'), true
	}
	dst = append(dst, '[')
	for i := range t.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = t.Items[i].appendJSON(dst); !ok {
			return dst, false
		}
	}
	dst = append(dst, ']')
	if t.Dropped != 0 {
		dst = append(dst, `,"dropped":`...)
		dst = strconv.AppendInt(dst, int64(t.Dropped), 10)
	}
	return append(dst, '}'), true
}

func (it *TimelineItem) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, it.Seq, 10)
	dst = append(dst, `,"time":`...)
	var ok bool
	if dst, ok = appendTime(dst, it.Time); !ok {
		return dst, false
	}
	dst = append(dst, `,"kind":`...)
	dst = jsonenc.AppendString(dst, it.Kind)
	if it.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = jsonenc.AppendString(dst, it.Text)
	}
	if it.Tool != nil {
		dst = append(dst, `,"tool":`...)
		if dst, ok = it.Tool.appendJSON(dst); !ok {
			return dst, false
		}
	}
	if it.Error != nil {
		dst = append(dst, `,"error":`...)
		if dst, ok = appendMarshal(dst, it.Error); !ok {
			return dst, false
		}
	}
	if it.Approval != nil {
		dst = append(dst, `,"approval":`...)
		if dst, ok = appendMarshal(dst, it.Approval); !ok {
			return dst, false
		}
	}
	if it.LLM != nil {
		dst = append(dst, `,"llm":`...)
		if dst, ok = appendMarshal(dst, it.LLM); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

func (c *ToolCall) appendJSON(dst []byte) ([]byte, bool) {
	var ok bool
	dst = append(dst, `{"call_id":`...)
	dst = jsonenc.AppendString(dst, c.CallID)
	if c.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = jsonenc.AppendString(dst, c.Name)
	}
	if len(c.Args) > 0 {
		dst = append(dst, `,"args":`...)
		if dst, ok = jsonenc.AppendRaw(dst, c.Args); !ok {
			return dst, false
		}
	}
	if c.ArgsError != "" {
		dst = append(dst, `,"args_error":`...)
		dst = jsonenc.AppendString(dst, c.ArgsError)
	}
	if c.ArgsText != "" {
		dst = append(dst, `,"args_text":`...)
		dst = jsonenc.AppendString(dst, c.ArgsText)
	}
	dst = append(dst, `,"state":`...)
	dst = jsonenc.AppendString(dst, c.State)
	if len(c.Output) > 0 {
		dst = append(dst, `,"output":`...)
		if dst, ok = jsonenc.AppendRaw(dst, c.Output); !ok {
			return dst, false
		}
	}
	if c.OutputRef != nil {
		dst = append(dst, `,"output_ref":`...)
		if dst, ok = appendMarshal(dst, c.OutputRef); !ok {
			return dst, false
		}
	}
	if c.Error != nil {
		dst = append(dst, `,"error":`...)
		if dst, ok = appendMarshal(dst, c.Error); !ok {
			return dst, false
		}
	}
	if c.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = jsonenc.AppendString(dst, c.Reason)
	}
	if c.ResultSeq != 0 {
		dst = append(dst, `,"result_seq":`...)
		dst = strconv.AppendUint(dst, c.ResultSeq, 10)
	}
	if c.Child != "" {
		dst = append(dst, `,"child":`...)
		dst = jsonenc.AppendString(dst, c.Child)
	}
	return append(dst, '}'), true
}

// AppendJSON implements projections.JSONAppender.
func (c *LLMContext) AppendJSON(dst []byte) ([]byte, bool) {
	if c == nil {
		return append(dst, "null"...), true
	}
	var ok bool
	dst = append(dst, `{"messages":`...)
	if dst, ok = appendMessages(dst, c.Messages); !ok {
		return dst, false
	}
	dst = append(dst, `,"tokens":`...)
	dst = strconv.AppendInt(dst, int64(c.Tokens), 10)
	dst = append(dst, `,"dropped":`...)
	dst = strconv.AppendInt(dst, int64(c.Dropped), 10)
	if c.Compacted != 0 {
		dst = append(dst, `,"compacted":`...)
		dst = strconv.AppendInt(dst, int64(c.Compacted), 10)
	}
	if len(c.Early) > 0 {
		dst = append(dst, `,"early":`...)
		if dst, ok = appendMessages(dst, c.Early); !ok {
			return dst, false
		}
	}
	if len(c.Held) > 0 {
		dst = append(dst, `,"held":`...)
		if dst, ok = appendMessages(dst, c.Held); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

func appendMessages(dst []byte, ms []Message) ([]byte, bool) {
	if ms == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '[')
	for i := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = ms[i].appendJSON(dst); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

func (m *Message) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"role":`...)
	dst = jsonenc.AppendString(dst, m.Role)
	dst = append(dst, `,"content":`...)
	dst = jsonenc.AppendString(dst, m.Content)
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonenc.AppendString(dst, tc.ID)
			dst = append(dst, `,"name":`...)
			dst = jsonenc.AppendString(dst, tc.Name)
			if len(tc.Args) > 0 {
				dst = append(dst, `,"args":`...)
				var ok bool
				if dst, ok = jsonenc.AppendRaw(dst, tc.Args); !ok {
					return dst, false
				}
			}
			if tc.ArgsText != "" {
				dst = append(dst, `,"args_text":`...)
				dst = jsonenc.AppendString(dst, tc.ArgsText)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = jsonenc.AppendString(dst, m.ToolCallID)
	}
	if m.Request != "" {
		dst = append(dst, `,"request":`...)
		dst = jsonenc.AppendString(dst, m.Request)
	}
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, m.Seq, 10)
	dst = append(dst, `,"tokens":`...)
	dst = strconv.AppendInt(dst, int64(m.Tokens), 10)
	if m.Pin != "" {
		dst = append(dst, `,"pin":`...)
		dst = jsonenc.AppendString(dst, m.Pin)
	}
	return append(dst, '}'), true
}

// appendMarshal appends json.Marshal(v).
func appendMarshal(dst []byte, v any) ([]byte, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// appendTime appends t as time.Time's MarshalJSON does; false for the
// times it refuses (years outside 0–9999, odd zone offsets).
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return dst, false
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), true
}

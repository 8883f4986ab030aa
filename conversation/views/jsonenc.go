package views

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
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
	dst = appendString(dst, it.Kind)
	if it.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, it.Text)
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
	dst = appendString(dst, c.CallID)
	if c.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, c.Name)
	}
	if len(c.Args) > 0 {
		dst = append(dst, `,"args":`...)
		if dst, ok = appendRaw(dst, c.Args); !ok {
			return dst, false
		}
	}
	if c.ArgsError != "" {
		dst = append(dst, `,"args_error":`...)
		dst = appendString(dst, c.ArgsError)
	}
	if c.ArgsText != "" {
		dst = append(dst, `,"args_text":`...)
		dst = appendString(dst, c.ArgsText)
	}
	dst = append(dst, `,"state":`...)
	dst = appendString(dst, c.State)
	if len(c.Output) > 0 {
		dst = append(dst, `,"output":`...)
		if dst, ok = appendRaw(dst, c.Output); !ok {
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
		dst = appendString(dst, c.Reason)
	}
	if c.ResultSeq != 0 {
		dst = append(dst, `,"result_seq":`...)
		dst = strconv.AppendUint(dst, c.ResultSeq, 10)
	}
	if c.Child != "" {
		dst = append(dst, `,"child":`...)
		dst = appendString(dst, c.Child)
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
	dst = appendString(dst, m.Role)
	dst = append(dst, `,"content":`...)
	dst = appendString(dst, m.Content)
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = appendString(dst, tc.ID)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, tc.Name)
			if len(tc.Args) > 0 {
				dst = append(dst, `,"args":`...)
				var ok bool
				if dst, ok = appendRaw(dst, tc.Args); !ok {
					return dst, false
				}
			}
			if tc.ArgsText != "" {
				dst = append(dst, `,"args_text":`...)
				dst = appendString(dst, tc.ArgsText)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = appendString(dst, m.ToolCallID)
	}
	if m.Request != "" {
		dst = append(dst, `,"request":`...)
		dst = appendString(dst, m.Request)
	}
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, m.Seq, 10)
	dst = append(dst, `,"tokens":`...)
	dst = strconv.AppendInt(dst, int64(m.Tokens), 10)
	if m.Pin != "" {
		dst = append(dst, `,"pin":`...)
		dst = appendString(dst, m.Pin)
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

// appendRaw appends raw JSON as encoding/json does for a json.RawMessage:
// compacted, with '<', '>', '&', U+2028 and U+2029 escaped. Invalid JSON
// is refused, as json.Marshal refuses it.
func appendRaw(dst []byte, raw []byte) ([]byte, bool) {
	if !json.Valid(raw) {
		return dst, false
	}
	start := 0
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case c == '\\':
				i++ // the escaped byte (valid JSON: never past the end)
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does,
// HTML escaping included.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

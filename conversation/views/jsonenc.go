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
// is refused, as json.Marshal refuses it. It checks the syntax as it
// copies, in one pass: json.Valid before the copy took most of the time
// a checkpoint spent on a tool call's arguments and output.
func appendRaw(dst []byte, raw []byte) ([]byte, bool) {
	c := rawCompactor{src: raw, dst: dst}
	c.space()
	if !c.value(0) {
		return dst, false
	}
	c.space()
	if c.i != len(c.src) {
		return dst, false
	}
	return append(c.dst, c.src[c.start:]...), true
}

// rawCompactor copies src to dst as appendRaw does: src[start:i] is
// checked and waits to be copied.
type rawCompactor struct {
	src, dst []byte
	i, start int
}

// maxRawDepth bounds the nesting appendRaw follows; deeper values are left
// to json.Marshal (which refuses them past its own limit).
const maxRawDepth = 512

// space drops the whitespace at i.
func (c *rawCompactor) space() {
	j := c.i
	for j < len(c.src) {
		switch c.src[j] {
		case ' ', '\t', '\n', '\r':
			j++
			continue
		}
		break
	}
	if j > c.i {
		c.dst = append(c.dst, c.src[c.start:c.i]...)
		c.i, c.start = j, j
	}
}

// value checks one value in JSON's grammar, as strictly as encoding/json.
func (c *rawCompactor) value(depth int) bool {
	if c.i >= len(c.src) {
		return false
	}
	switch b := c.src[c.i]; {
	case b == '{':
		if depth >= maxRawDepth {
			return false
		}
		c.i++
		c.space()
		if c.i < len(c.src) && c.src[c.i] == '}' {
			c.i++
			return true
		}
		for {
			c.space()
			if c.i >= len(c.src) || c.src[c.i] != '"' || !c.string() {
				return false
			}
			c.space()
			if c.i >= len(c.src) || c.src[c.i] != ':' {
				return false
			}
			c.i++
			c.space()
			if !c.value(depth + 1) {
				return false
			}
			c.space()
			if c.i >= len(c.src) {
				return false
			}
			switch c.src[c.i] {
			case ',':
				c.i++
			case '}':
				c.i++
				return true
			default:
				return false
			}
		}
	case b == '[':
		if depth >= maxRawDepth {
			return false
		}
		c.i++
		c.space()
		if c.i < len(c.src) && c.src[c.i] == ']' {
			c.i++
			return true
		}
		for {
			c.space()
			if !c.value(depth + 1) {
				return false
			}
			c.space()
			if c.i >= len(c.src) {
				return false
			}
			switch c.src[c.i] {
			case ',':
				c.i++
			case ']':
				c.i++
				return true
			default:
				return false
			}
		}
	case b == '"':
		return c.string()
	case b == '-' || ('0' <= b && b <= '9'):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return false
}

// string checks a string (escapes and control bytes; like encoding/json's
// scanner, not UTF-8) and escapes the HTML characters and line separators
// in it.
func (c *rawCompactor) string() bool {
	i := c.i + 1
	for i < len(c.src) {
		b := c.src[i]
		if rawPlain[b] {
			i++
			continue
		}
		switch {
		case b == '"':
			c.i = i + 1
			return true
		case b < 0x20:
			return false
		case b == '\\':
			if i+1 >= len(c.src) {
				return false
			}
			switch c.src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if !hex4(c.src[i+2:]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case b == '<' || b == '>' || b == '&':
			c.dst = append(c.dst, c.src[c.start:i]...)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			i++
			c.start = i
		case b == 0xE2 && i+2 < len(c.src) && c.src[i+1] == 0x80 && c.src[i+2]&^1 == 0xA8:
			c.dst = append(c.dst, c.src[c.start:i]...)
			c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hexDigits[c.src[i+2]&0xF])
			i += 3
			c.start = i
		default:
			i++
		}
	}
	return false
}

// rawPlain marks the bytes a string copies as they are.
var rawPlain = func() (t [256]bool) {
	for b := 0x20; b < 256; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' && b != 0xE2
	}
	return t
}()

func hex4(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, x := range b[:4] {
		if !('0' <= x && x <= '9' || 'a' <= x && x <= 'f' || 'A' <= x && x <= 'F') {
			return false
		}
	}
	return true
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *rawCompactor) number() bool {
	i := c.i
	if c.src[i] == '-' {
		i++
	}
	switch {
	case i < len(c.src) && c.src[i] == '0':
		i++
	case i < len(c.src) && '1' <= c.src[i] && c.src[i] <= '9':
		i = digits(c.src, i)
	default:
		return false
	}
	if i < len(c.src) && c.src[i] == '.' {
		j := digits(c.src, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(c.src) && (c.src[i] == 'e' || c.src[i] == 'E') {
		i++
		if i < len(c.src) && (c.src[i] == '+' || c.src[i] == '-') {
			i++
		}
		j := digits(c.src, i)
		if j == i {
			return false
		}
		i = j
	}
	c.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func (c *rawCompactor) literal(lit string) bool {
	if len(c.src)-c.i < len(lit) || string(c.src[c.i:c.i+len(lit)]) != lit {
		return false
	}
	c.i += len(lit)
	return true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does,
// HTML escaping included. Runs of bytes that need no escape are found
// through a table and copied at once.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if stringPlain[b] {
				i++
				for i < len(s) && stringPlain[s[i]] {
					i++
				}
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

// stringPlain marks the bytes appendString copies as they are: ASCII but
// for control bytes, quotes, backslashes and HTML characters.
var stringPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

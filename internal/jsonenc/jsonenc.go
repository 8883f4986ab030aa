// Package jsonenc appends JSON exactly as encoding/json writes it, without
// reflection: a string, and raw JSON (a json.RawMessage's bytes) checked
// and compacted. The hand-written encoders of the hot paths (the log form
// of directives, conversation states) build on it; each of them falls
// back to encoding/json wherever these report false.
package jsonenc

import "unicode/utf8"

// AppendRaw appends raw JSON as encoding/json does for a json.RawMessage:
// compacted, with '<', '>', '&', U+2028 and U+2029 escaped. Invalid JSON
// is refused, as json.Marshal refuses it. It checks the syntax as it
// copies, in one pass: json.Valid before the copy took most of the time
// a checkpoint spent on a tool call's arguments and output.
func AppendRaw(dst []byte, raw []byte) ([]byte, bool) {
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

// rawCompactor copies src to dst as AppendRaw does: src[start:i] is
// checked and waits to be copied.
type rawCompactor struct {
	src, dst []byte
	i, start int
}

// maxRawDepth bounds the nesting AppendRaw follows; it reports false for
// deeper values, which its callers leave to json.Marshal (which refuses
// them past its own limit).
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

// number checks the number at i.
func (c *rawCompactor) number() bool {
	end, ok := NumberEnd(c.src, c.i)
	c.i = end
	return ok
}

// NumberEnd returns the end of the JSON number that starts at b[i], by
// the grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and whether
// one starts there at all (i past b's end included).
func NumberEnd(b []byte, i int) (int, bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return start, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return start, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return start, false
		}
		i = j
	}
	return i, true
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

// AppendString appends s as a JSON string exactly as encoding/json does,
// HTML escaping included. Runs of bytes that need no escape are found
// through a table and copied at once.
func AppendString(dst []byte, s string) []byte {
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

// stringPlain marks the bytes AppendString copies as they are: ASCII but
// for control bytes, quotes, backslashes and HTML characters.
var stringPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

package bus

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/internal/jsonenc"
)

// validJSON reports whether b is exactly one JSON value, as json.Valid
// does. json.Valid runs a state machine with an indirect call per byte,
// which costs more than building the rest of a small signal; this walks
// the grammar directly and leaves input nested deeper than maxValidDepth
// to json.Valid, so that its nesting limit stays the one that applies.
func validJSON(b []byte) bool {
	v := validator{b: b}
	i, ok := v.value(skipWS(b, 0), 0)
	if v.deep {
		return json.Valid(b)
	}
	return ok && skipWS(b, i) == len(b)
}

const maxValidDepth = 64

type validator struct {
	b    []byte
	deep bool // gave up: nested deeper than maxValidDepth
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value checks the value at b[i] and returns the index after it.
func (v *validator) value(i, depth int) (int, bool) {
	b := v.b
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth == maxValidDepth {
			v.deep = true
			return 0, false
		}
		return v.container(i, depth+1)
	case c == '"':
		return v.str(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return JSONNumberEnd(v.b, i)
	}
	return 0, false
}

// container checks the object or array at b[i].
func (v *validator) container(i, depth int) (int, bool) {
	b := v.b
	object, end := b[i] == '{', byte(']')
	if object {
		end = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i, ok = v.str(i); !ok {
				return 0, false
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = skipWS(b, i+1)
		}
		if i, ok = v.value(i, depth); !ok {
			return 0, false
		}
		if i = skipWS(b, i); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case end:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// str checks the string at b[i]. Like json.Valid it does not check that
// the bytes are UTF-8.
func (v *validator) str(i int) (int, bool) {
	b := v.b
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i <= 4 {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func (v *validator) literal(i int, lit string) (int, bool) {
	if len(v.b)-i < len(lit) || string(v.b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// JSONNumberEnd returns the end of the JSON number that starts at b[i],
// by the grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and
// whether one starts there at all.
func JSONNumberEnd(b []byte, i int) (int, bool) {
	end, ok := jsonenc.NumberEnd(b, i)
	if !ok {
		return 0, false
	}
	return end, true
}

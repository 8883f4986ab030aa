package bus

import (
	"encoding/json"
	"testing"
)

// TestJSONValueEnd: a valid value followed by a trailer ends where the
// trailer begins; whatever else it accepts is one valid value.
func TestJSONValueEnd(t *testing.T) {
	for _, s := range validSeeds {
		if len(s) == 0 || s[0] == ' ' || s[0] == '\n' {
			continue
		}
		b := []byte(s + `,"next":1}`)
		end, ok := JSONValueEnd(b, 0)
		if json.Valid([]byte(s)) && len(s) == len(trimRightWS(s)) && depthOK(s) {
			if !ok || end != len(s) {
				t.Errorf("JSONValueEnd(%.40q) = %d, %v; want %d, true", s, end, ok, len(s))
			}
			continue
		}
		if ok && !json.Valid(b[:end]) {
			t.Errorf("JSONValueEnd(%.40q) accepted %q, which is not a JSON value", s, b[:end])
		}
	}
}

func trimRightWS(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\n' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// depthOK is false for the seeds nested past JSONValueEnd's limit.
func depthOK(s string) bool {
	d, most := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			d++
			most = max(most, d)
		case ']', '}':
			d--
		}
	}
	return most <= maxValidDepth
}

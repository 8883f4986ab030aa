package jsonenc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"pgregory.net/rapid"
)

// TestAppendStringMatchesMarshal checks AppendString against
// encoding/json on strings with every escape.
func TestAppendStringMatchesMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := testkit.JSONText().Draw(t, "s")
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendString(%q) = %s, json.Marshal %s", s, got, want)
		}
	})
}

// rawText draws raw JSON texts near the grammar's edges: valid values with
// whitespace, escapes and nesting, and texts broken in one place.
func rawText() *rapid.Generator[string] {
	var value func(t *rapid.T, depth int) string
	value = func(t *rapid.T, depth int) string {
		ws := func() string { return rapid.SampledFrom([]string{"", "", " ", "\n\t", "\r\n "}).Draw(t, "ws") }
		kind := rapid.IntRange(0, 6).Draw(t, "kind")
		if depth > 3 {
			kind = rapid.IntRange(2, 6).Draw(t, "leaf")
		}
		switch kind {
		case 0:
			n := rapid.IntRange(0, 3).Draw(t, "members")
			var b strings.Builder
			b.WriteString("{" + ws())
			for i := range n {
				if i > 0 {
					b.WriteString("," + ws())
				}
				k, _ := json.Marshal(testkit.JSONText().Draw(t, "key"))
				b.WriteString(string(k) + ws() + ":" + ws() + value(t, depth+1) + ws())
			}
			return b.String() + "}"
		case 1:
			n := rapid.IntRange(0, 3).Draw(t, "elems")
			var b strings.Builder
			b.WriteString("[" + ws())
			for i := range n {
				if i > 0 {
					b.WriteString("," + ws())
				}
				b.WriteString(value(t, depth+1) + ws())
			}
			return b.String() + "]"
		case 2:
			b, _ := json.Marshal(testkit.JSONText().Draw(t, "text"))
			return string(b)
		case 3:
			return rapid.SampledFrom([]string{`"\u00e9\ud83d\ude00"`, `"\/\b\f\n\r\t\"\\"`, `"\u12"`, `"\x"`, "\"\u2028<>&\u2029\"", "\"\xe2\x80\"", "\"\t\""}).Draw(t, "escape")
		case 4:
			return rapid.SampledFrom([]string{"0", "-0", "1.5e3", "-12.25E-2", "1e+9", "01", "1.", ".5", "-", "1e", "2E+", "-x"}).Draw(t, "number")
		case 5:
			return rapid.SampledFrom([]string{"true", "false", "null", "tru", "nul", "falsey"}).Draw(t, "literal")
		}
		return rapid.String().Draw(t, "junk")
	}
	return rapid.Custom(func(t *rapid.T) string {
		s := value(t, 0)
		if s != "" && rapid.IntRange(0, 9).Draw(t, "break") == 0 {
			i := rapid.IntRange(0, len(s)-1).Draw(t, "at")
			s = s[:i] + rapid.SampledFrom([]string{"", ",", "}", "]", ":", `"`, "\x00", " x"}).Draw(t, "with") + s[i+1:]
		}
		return rapid.SampledFrom([]string{"", " ", "\n"}).Draw(t, "lead") + s
	})
}

// TestAppendRawMatchesMarshal checks AppendRaw against json.Marshal of a
// json.RawMessage: the same bytes for valid JSON, a refusal for invalid.
func TestAppendRawMatchesMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := rawText().Draw(t, "raw")
		if raw == "" {
			return // never encoded: the fields that hold raw JSON omit it when empty
		}
		want, err := json.Marshal(json.RawMessage(raw))
		got, ok := AppendRaw([]byte("x"), []byte(raw))
		if ok != (err == nil) {
			t.Fatalf("AppendRaw(%q) ok %v, json.Marshal error %v", raw, ok, err)
		}
		if ok && (!bytes.Equal(got[1:], want) || got[0] != 'x') {
			t.Fatalf("AppendRaw(%q) = %s, json.Marshal %s", raw, got, want)
		}
		if !ok && string(got) != "x" {
			t.Fatalf("AppendRaw(%q) refused but returned %q", raw, got)
		}
	})
	deep := strings.Repeat("[", maxRawDepth+1) + strings.Repeat("]", maxRawDepth+1)
	if _, ok := AppendRaw(nil, []byte(deep)); ok {
		t.Errorf("appendRaw followed %d levels of nesting", maxRawDepth+1)
	}
}

// FuzzAppendRaw holds AppendRaw to json.Marshal of a json.RawMessage on
// any bytes: the same output for what it accepts, a refusal (and dst
// untouched) for what json.Marshal refuses.
func FuzzAppendRaw(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : [ 1 , 2.5e-3 ] , "b" : "x<y>&z" } `, "\"\u2028\xe2\x80\"", `[true,false,null]`, `{"a":`, `01`, `"\u12"`, "\"\t\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return // never encoded: the fields that hold raw JSON omit it when empty
		}
		want, err := json.Marshal(json.RawMessage(raw))
		got, ok := AppendRaw([]byte("x"), raw)
		switch {
		case ok != (err == nil):
			// Deeper than maxRawDepth is refused here and left to
			// json.Marshal by the callers; that is the one difference.
			if ok || !tooDeep(raw) {
				t.Fatalf("AppendRaw(%q) ok %v, json.Marshal error %v", raw, ok, err)
			}
		case ok && !bytes.Equal(got[1:], want):
			t.Fatalf("AppendRaw(%q) = %s, json.Marshal %s", raw, got[1:], want)
		case !ok && string(got) != "x":
			t.Fatalf("AppendRaw(%q) refused but wrote %q", raw, got)
		}
	})
}

// tooDeep reports whether raw opens more than maxRawDepth arrays or
// objects at once (counting brackets outside strings).
func tooDeep(raw []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > maxRawDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// FuzzAppendString holds AppendString to json.Marshal on any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&</a>", "\u2028\u2029", "\xff\xe2\x80", "\x00\x1f\x7f", "日本\U0001F600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendString(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	})
}

package views

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"pgregory.net/rapid"
)

// jsonText draws strings that exercise every escape of encoding/json:
// quotes, backslashes, control bytes, HTML characters, U+2028/U+2029,
// other non-ASCII and invalid UTF-8.
func jsonText() *rapid.Generator[string] {
	pieces := []string{"", "a", "hello world", `"`, `\`, "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f",
		"<", ">", "&", "\u2028", "\u2029", "é", "日本", "\U0001F600", "\xff", "\xe2\x80", "\xe2\x80\xa8", "\xc3", "/"}
	return rapid.Custom(func(t *rapid.T) string {
		if rapid.Bool().Draw(t, "arbitrary") {
			return rapid.String().Draw(t, "s")
		}
		var b []byte
		for _, p := range rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 6).Draw(t, "pieces") {
			b = append(b, p...)
		}
		return string(b)
	})
}

// rawJSON draws raw messages: valid ones with whitespace and escapes to
// compact, and invalid ones, which json.Marshal refuses.
func rawJSON() *rapid.Generator[json.RawMessage] {
	samples := []string{"", `{}`, `{"path":"parser_test.go"}`, ` { "a" : [ 1 , 2 ] , "b" : "x y" } `,
		`"<b>&amp;</b>"`, "\"\u2028\u2029\"", `"a\"b\\"`, `[true,false,null,1.5e3,-0]`, `"\u00e9 \ud83d\ude00"`,
		"{\n\t\"k\": \"v\"\r\n}", `{"a":`, `nul`, `"unterminated`, `{"a":1}x`}
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		if rapid.Bool().Draw(t, "string") {
			b, _ := json.Marshal(jsonText().Draw(t, "text"))
			return b
		}
		s := rapid.SampledFrom(samples).Draw(t, "raw")
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	})
}

func drawTime(t *rapid.T) time.Time {
	ns := rapid.Int64Range(-1e18, 1e18).Draw(t, "unixnano")
	tm := time.Unix(0, ns).UTC()
	switch rapid.IntRange(0, 3).Draw(t, "zone") {
	case 1:
		tm = tm.In(time.FixedZone("x", 5*3600+30*60))
	case 2:
		tm = tm.In(time.FixedZone("odd", 37))
	case 3:
		tm = time.Date(rapid.IntRange(-2, 10002).Draw(t, "year"), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return tm
}

func drawError(t *rapid.T, label string) *bus.Error {
	if !rapid.Bool().Draw(t, label) {
		return nil
	}
	return &bus.Error{Type: jsonText().Draw(t, "type"), Message: jsonText().Draw(t, "message")}
}

func drawTimeline(t *rapid.T) *Timeline {
	if rapid.IntRange(0, 20).Draw(t, "nil") == 0 {
		return nil
	}
	tl := &Timeline{}
	n := rapid.IntRange(-1, 5).Draw(t, "items")
	if n >= 0 {
		tl.Items = []TimelineItem{}
	}
	for range n {
		it := TimelineItem{
			Seq:   rapid.Uint64().Draw(t, "seq"),
			Time:  drawTime(t),
			Kind:  jsonText().Draw(t, "kind"),
			Text:  jsonText().Draw(t, "text"),
			Error: drawError(t, "item error"),
		}
		if rapid.Bool().Draw(t, "approval") {
			it.Approval = &ApprovalItem{CallID: jsonText().Draw(t, "approval call"), Name: jsonText().Draw(t, "approval name"),
				Args: rawJSON().Draw(t, "approval args"), Reason: jsonText().Draw(t, "approval reason"),
				TimeoutMS: rapid.Int64().Draw(t, "approval timeout"), Decision: jsonText().Draw(t, "decision"),
				Remember: jsonText().Draw(t, "remember"), By: jsonText().Draw(t, "by")}
		}
		if rapid.Bool().Draw(t, "llm") {
			it.LLM = &LLMAttempt{Attempt: rapid.Int().Draw(t, "attempt"), Status: rapid.Int().Draw(t, "status"),
				RetryInMS: rapid.Int64().Draw(t, "retry in"), Retryable: rapid.Bool().Draw(t, "retryable")}
		}
		if rapid.Bool().Draw(t, "tool") {
			it.Tool = &ToolCall{
				CallID:    jsonText().Draw(t, "call"),
				Name:      jsonText().Draw(t, "name"),
				Args:      rawJSON().Draw(t, "args"),
				ArgsError: jsonText().Draw(t, "args error"),
				ArgsText:  jsonText().Draw(t, "args text"),
				State:     jsonText().Draw(t, "state"),
				Output:    rawJSON().Draw(t, "output"),
				Error:     drawError(t, "tool error"),
				Reason:    jsonText().Draw(t, "reason"),
				ResultSeq: rapid.Uint64().Draw(t, "result seq"),
			}
			if rapid.Bool().Draw(t, "ref") {
				it.Tool.OutputRef = &conversation.ArtifactRef{ID: jsonText().Draw(t, "ref id"), Size: rapid.Int64().Draw(t, "size")}
			}
		}
		tl.Items = append(tl.Items, it)
	}
	tl.Dropped = rapid.IntRange(0, 9).Draw(t, "dropped")
	return tl
}

func drawMessages(t *rapid.T, label string) []Message {
	n := rapid.IntRange(-1, 4).Draw(t, label)
	if n < 0 {
		return nil
	}
	ms := []Message{}
	for range n {
		m := Message{
			Role:       jsonText().Draw(t, "role"),
			Content:    jsonText().Draw(t, "content"),
			ToolCallID: jsonText().Draw(t, "tool call id"),
			Request:    jsonText().Draw(t, "request"),
			Seq:        rapid.Uint64().Draw(t, "seq"),
			Tokens:     rapid.Int().Draw(t, "tokens"),
			Pin:        rapid.SampledFrom([]string{"", PinTask, PinSummary}).Draw(t, "pin"),
		}
		k := rapid.IntRange(-1, 2).Draw(t, "calls")
		if k >= 0 {
			m.ToolCalls = []MessageCall{}
		}
		for range k {
			m.ToolCalls = append(m.ToolCalls, MessageCall{ID: jsonText().Draw(t, "id"), Name: jsonText().Draw(t, "name"), Args: rawJSON().Draw(t, "args"), ArgsText: jsonText().Draw(t, "args text")})
		}
		ms = append(ms, m)
	}
	return ms
}

func drawLLMContext(t *rapid.T) *LLMContext {
	if rapid.IntRange(0, 20).Draw(t, "nil") == 0 {
		return nil
	}
	return &LLMContext{
		Messages:  drawMessages(t, "messages"),
		Tokens:    rapid.Int().Draw(t, "tokens"),
		Dropped:   rapid.Int().Draw(t, "dropped"),
		Compacted: rapid.IntRange(0, 9).Draw(t, "compacted"),
		Early:     drawMessages(t, "early"),
		Held:      drawMessages(t, "held"),
	}
}

// sameAsMarshal checks that AppendJSON gives json.Marshal's bytes, or
// declines where json.Marshal fails (and maybe elsewhere).
func sameAsMarshal[S interface {
	AppendJSON([]byte) ([]byte, bool)
}](t interface{ Fatalf(string, ...any) }, s S) {
	want, err := json.Marshal(s)
	got, ok := s.AppendJSON([]byte("prefix"))
	if err != nil {
		if ok {
			t.Fatalf("json.Marshal fails (%v) but AppendJSON gives %q", err, got)
		}
		return
	}
	if ok && !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("AppendJSON differs from json.Marshal:\ngot  %q\nwant %q", got[len("prefix"):], want)
	}
}

func TestTimelineAppendJSONMatchesMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { sameAsMarshal(t, drawTimeline(t)) })
}

func TestLLMContextAppendJSONMatchesMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { sameAsMarshal(t, drawLLMContext(t)) })
}

// TestAppendJSONDeclinesRarely: ordinary states take the fast path.
func TestAppendJSONDeclinesRarely(t *testing.T) {
	tl := &Timeline{Items: []TimelineItem{{Seq: 1, Time: time.Unix(1, 5).UTC(), Kind: ItemToolCall,
		Tool: &ToolCall{CallID: "k1", Args: json.RawMessage(`{"path": "a <b>.go"}`), State: ToolCompleted}}}}
	if _, ok := tl.AppendJSON(nil); !ok {
		t.Fatal("timeline declined")
	}
	sameAsMarshal(t, tl)
	c := &LLMContext{Messages: []Message{{Role: RoleUser, Content: "hi\n", Seq: 2, Tokens: 5}}}
	if _, ok := c.AppendJSON(nil); !ok {
		t.Fatal("llm_context declined")
	}
	sameAsMarshal(t, c)
}

// TestAppendStringMatchesMarshal checks appendString against
// encoding/json on strings with every escape.
func TestAppendStringMatchesMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := jsonText().Draw(t, "s")
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("appendString(%q) = %s, json.Marshal %s", s, got, want)
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
				k, _ := json.Marshal(jsonText().Draw(t, "key"))
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
			b, _ := json.Marshal(jsonText().Draw(t, "text"))
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

// TestAppendRawMatchesMarshal checks appendRaw against json.Marshal of a
// json.RawMessage: the same bytes for valid JSON, a refusal for invalid.
func TestAppendRawMatchesMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := rawText().Draw(t, "raw")
		if raw == "" {
			return // never encoded: the fields that hold raw JSON omit it when empty
		}
		want, err := json.Marshal(json.RawMessage(raw))
		got, ok := appendRaw([]byte("x"), []byte(raw))
		if ok != (err == nil) {
			t.Fatalf("appendRaw(%q) ok %v, json.Marshal error %v", raw, ok, err)
		}
		if ok && (!bytes.Equal(got[1:], want) || got[0] != 'x') {
			t.Fatalf("appendRaw(%q) = %s, json.Marshal %s", raw, got, want)
		}
		if !ok && string(got) != "x" {
			t.Fatalf("appendRaw(%q) refused but returned %q", raw, got)
		}
	})
	deep := strings.Repeat("[", maxRawDepth+1) + strings.Repeat("]", maxRawDepth+1)
	if _, ok := appendRaw(nil, []byte(deep)); ok {
		t.Errorf("appendRaw followed %d levels of nesting", maxRawDepth+1)
	}
}

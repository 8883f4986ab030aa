package views

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"pgregory.net/rapid"
)

// rawJSON draws raw messages: valid ones with whitespace and escapes to
// compact, and invalid ones, which json.Marshal refuses.
func rawJSON() *rapid.Generator[json.RawMessage] {
	samples := []string{"", `{}`, `{"path":"parser_test.go"}`, ` { "a" : [ 1 , 2 ] , "b" : "x y" } `,
		`"<b>&amp;</b>"`, "\"\u2028\u2029\"", `"a\"b\\"`, `[true,false,null,1.5e3,-0]`, `"\u00e9 \ud83d\ude00"`,
		"{\n\t\"k\": \"v\"\r\n}", `{"a":`, `nul`, `"unterminated`, `{"a":1}x`}
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		if rapid.Bool().Draw(t, "string") {
			b, _ := json.Marshal(testkit.JSONText().Draw(t, "text"))
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
	return &bus.Error{Type: testkit.JSONText().Draw(t, "type"), Message: testkit.JSONText().Draw(t, "message")}
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
			Kind:  testkit.JSONText().Draw(t, "kind"),
			Text:  testkit.JSONText().Draw(t, "text"),
			Error: drawError(t, "item error"),
		}
		if rapid.Bool().Draw(t, "approval") {
			it.Approval = &ApprovalItem{CallID: testkit.JSONText().Draw(t, "approval call"), Name: testkit.JSONText().Draw(t, "approval name"),
				Args: rawJSON().Draw(t, "approval args"), Reason: testkit.JSONText().Draw(t, "approval reason"),
				TimeoutMS: rapid.Int64().Draw(t, "approval timeout"), Decision: testkit.JSONText().Draw(t, "decision"),
				Remember: testkit.JSONText().Draw(t, "remember"), By: testkit.JSONText().Draw(t, "by")}
		}
		if rapid.Bool().Draw(t, "llm") {
			it.LLM = &LLMAttempt{Attempt: rapid.Int().Draw(t, "attempt"), Status: rapid.Int().Draw(t, "status"),
				RetryInMS: rapid.Int64().Draw(t, "retry in"), Retryable: rapid.Bool().Draw(t, "retryable")}
		}
		if rapid.Bool().Draw(t, "tool") {
			it.Tool = &ToolCall{
				CallID:    testkit.JSONText().Draw(t, "call"),
				Name:      testkit.JSONText().Draw(t, "name"),
				Args:      rawJSON().Draw(t, "args"),
				ArgsError: testkit.JSONText().Draw(t, "args error"),
				ArgsText:  testkit.JSONText().Draw(t, "args text"),
				State:     testkit.JSONText().Draw(t, "state"),
				Output:    rawJSON().Draw(t, "output"),
				Error:     drawError(t, "tool error"),
				Reason:    testkit.JSONText().Draw(t, "reason"),
				ResultSeq: rapid.Uint64().Draw(t, "result seq"),
			}
			if rapid.Bool().Draw(t, "ref") {
				it.Tool.OutputRef = &conversation.ArtifactRef{ID: testkit.JSONText().Draw(t, "ref id"), Size: rapid.Int64().Draw(t, "size")}
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
			Role:       testkit.JSONText().Draw(t, "role"),
			Content:    testkit.JSONText().Draw(t, "content"),
			ToolCallID: testkit.JSONText().Draw(t, "tool call id"),
			Request:    testkit.JSONText().Draw(t, "request"),
			Seq:        rapid.Uint64().Draw(t, "seq"),
			Tokens:     rapid.Int().Draw(t, "tokens"),
			Pin:        rapid.SampledFrom([]string{"", PinTask, PinSummary}).Draw(t, "pin"),
		}
		k := rapid.IntRange(-1, 2).Draw(t, "calls")
		if k >= 0 {
			m.ToolCalls = []MessageCall{}
		}
		for range k {
			m.ToolCalls = append(m.ToolCalls, MessageCall{ID: testkit.JSONText().Draw(t, "id"), Name: testkit.JSONText().Draw(t, "name"), Args: rawJSON().Draw(t, "args"), ArgsText: testkit.JSONText().Draw(t, "args text")})
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

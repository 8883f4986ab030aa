package conversation

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// jsonLogForm is the log form encoding/json writes for d, as the codec
// wrote every directive of the loop before they wrote their own: the
// value's JSON with the kind spliced in front.
func jsonLogForm(t *rapid.T, d agents.Directive) []byte {
	body, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("%#v: %v", d, err)
	}
	kind, _ := json.Marshal(d.DirectiveKind())
	out := append([]byte(`{"kind":`), kind...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// TestDirectivesLogForm: the loop's directives, written by hand, are the
// bytes encoding/json wrote for them — any strings (HTML characters,
// escapes, U+2028, invalid UTF-8), any args, every optional member set or
// not — and the common ones are written by hand at all.
func TestDirectivesLogForm(t *testing.T) {
	codec := agents.NewDirectiveCodec()
	if err := RegisterDirectives(codec); err != nil {
		t.Fatal(err)
	}
	str := rapid.OneOf(
		rapid.StringMatching(`[a-z0-9_.:-]{0,12}`),
		rapid.SampledFrom([]string{"<b>&amp;</b>", `q"\`, "\u2028\u2029", "bad \xff utf8", "ctl \x00\n\t", "é🙂"}),
		rapid.String(),
	)
	args := rapid.SampledFrom([]json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(` {"path" : "a<b>.go",` + "\n" + `"n":[1, 2.5e3]} `), json.RawMessage(`"\u2028"`), json.RawMessage(`{"bad":`)})
	handled := map[string]bool{}
	rapid.Check(t, func(t *rapid.T) {
		var d agents.Directive
		switch rapid.IntRange(0, 4).Draw(t, "kind") {
		case 0:
			c := LLMCall{Conversation: str.Draw(t, "conv"), Request: str.Draw(t, "req"), Step: rapid.IntRange(-1, 1000).Draw(t, "step"),
				Attempt: rapid.IntRange(0, 9).Draw(t, "attempt"), DelayMS: rapid.Int64Range(0, 1e6).Draw(t, "delay"), Hooked: rapid.Bool().Draw(t, "hooked")}
			if rapid.IntRange(0, 4).Draw(t, "llm") == 0 {
				c.LLM = &LLMConfig{Model: str.Draw(t, "model")}
			}
			if rapid.IntRange(0, 4).Draw(t, "tools") == 0 {
				c.Tools = &[]string{str.Draw(t, "tool")}
			}
			d = c
		case 1:
			r := RunTool{Conversation: str.Draw(t, "conv"), CallID: str.Draw(t, "call"), Name: str.Draw(t, "name"), Args: args.Draw(t, "args"),
				Approved: rapid.Bool().Draw(t, "approved"), Mode: str.Draw(t, "mode"), Hooked: rapid.Bool().Draw(t, "hooked")}
			if rapid.IntRange(0, 4).Draw(t, "budget") == 0 {
				r.Budget = &Budget{MaxTokens: 10, MaxCostUSD: 0.5}
			}
			d = r
		case 2:
			s := str.Draw(t, "s")
			ct := event.ApplicationJSON
			d = Record{Event: bus.Signal{Context: &event.EventContextV1{ID: s, Type: "conversation.x", DataContentType: &ct,
				Source: types.URIRef{URL: url.URL{Path: "/agent/" + s}}, Time: &types.Timestamp{Time: time.Unix(1700000000, 5)},
				Extensions: map[string]any{"causationid": s}}, DataEncoded: []byte(`{"text":` + string(must(json.Marshal(s))) + ` }`)}}
		case 3:
			d = CancelTurn{Conversation: str.Draw(t, "conv"), Reason: str.Draw(t, "reason")}
		default:
			c := Compact{Conversation: str.Draw(t, "conv"), Request: str.Draw(t, "req"), Instruction: str.Draw(t, "inst"),
				KeepTokens: rapid.Int64Range(0, 1e6).Draw(t, "keep"), Reason: str.Draw(t, "reason")}
			if rapid.IntRange(0, 4).Draw(t, "llm") == 0 {
				c.LLM = &LLMConfig{Model: str.Draw(t, "model")}
			}
			d = c
		}
		got, err := codec.Encode(d)
		if _, jerr := json.Marshal(d); jerr != nil {
			if err == nil {
				t.Fatalf("%#v: encoded %s where encoding/json fails: %v", d, got, jerr)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := jsonLogForm(t, d); !bytes.Equal(got, want) {
			t.Fatalf("%#v:\n got %s\nwant %s", d, got, want)
		}
		if _, ok := d.(agents.LogFormAppender).AppendLogForm(nil); ok {
			handled[d.DirectiveKind()] = true
		}
	})
	for _, kind := range []string{KindLLMCall, KindRunTool, KindRecord, KindCancelTurn, KindCompact} {
		if !handled[kind] {
			t.Errorf("no %s directive was written by hand", kind)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// BenchmarkEncodeStep encodes what a step of the loop commits most often,
// a RunTool and a Record, into a reused buffer as the runtime does.
func BenchmarkEncodeStep(b *testing.B) {
	codec := agents.NewDirectiveCodec()
	if err := RegisterDirectives(codec); err != nil {
		b.Fatal(err)
	}
	ct := event.ApplicationJSON
	rec := Record{Event: bus.Signal{Context: &event.EventContextV1{ID: "01KB2Y8Q7J3M6ZV0R5T9XW4HCN.2", Type: "conversation.tool.completed", DataContentType: &ct,
		Source: types.URIRef{URL: url.URL{Path: "/agent/conv-1"}}, Time: &types.Timestamp{Time: time.Unix(1700000000, 5)},
		Extensions: map[string]any{"causationid": "01KB2Y8Q7J3M6ZV0R5T9XW4HCN"}}, DataEncoded: []byte(`{"call_id":"c1","output":"done"}`)}}
	dirs := []agents.Directive{
		RunTool{Conversation: "conv-1", CallID: "toolu_01", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`), Mode: "auto"},
		rec,
	}
	var buf []byte
	var err error
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = codec.AppendAll(buf[:0], dirs); err != nil {
			b.Fatal(err)
		}
	}
}

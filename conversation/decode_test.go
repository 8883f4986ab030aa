package conversation

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeData checks that DecodeData gives what encoding/json gives, for
// any input, and that its result does not share memory with the input;
// and that DecodeDataInto gives the same, shared or not, into a Data that
// held another event's.
// The seed corpus (testdata/fuzz/FuzzDecodeData) holds every event shape
// and the inputs the parser leaves to encoding/json.
func FuzzDecodeData(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		var want Data
		wantErr := json.Unmarshal(b, &want)
		in := append([]byte(nil), b...)
		got, err := DecodeData(in)
		clear(in) // the result must not alias its input
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("DecodeData(%q) error %v, encoding/json %v", b, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("DecodeData(%q) differs from encoding/json (-json +DecodeData):\n%s", b, diff)
		}
		for _, shared := range []bool{false, true} {
			into := Data{Text: "stale", Usage: &Usage{InputTokens: 1}, Tools: &[]string{"x"}}
			if err := DecodeDataInto(&into, b, shared); (err == nil) != (wantErr == nil) {
				t.Fatalf("DecodeDataInto(%q, shared %v) error %v, encoding/json %v", b, shared, err, wantErr)
			}
			if wantErr != nil {
				continue // encoding/json leaves what it decoded before the error
			}
			if diff := cmp.Diff(want, into); diff != "" {
				t.Fatalf("DecodeDataInto(%q, shared %v) differs from encoding/json (-json +DecodeDataInto):\n%s", b, shared, diff)
			}
		}
	})
}

// FuzzUnquoteString checks that UnquoteString gives what json.Unmarshal
// into a string gives, whenever it answers.
func FuzzUnquoteString(f *testing.F) {
	for _, s := range []string{`"wrote 15 bytes"`, ` "a\nb\t\"q\" \u00e9 \ud83d\ude00 \ud800" `, `"<&>"`, `"\u12"`, "\"\xff\"", `"a"x`, `1`, `null`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := UnquoteString(b)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("UnquoteString(%q) = %q, json.Unmarshal refuses it: %v", b, got, err)
		}
		if got != want {
			t.Fatalf("UnquoteString(%q) = %q, json.Unmarshal %q", b, got, want)
		}
	})
}

// TestDecodeDataReadsEveryMember sets each member of Data on its own and
// checks that the parser reads it without encoding/json and as
// encoding/json does: a member added to Data without the parser would be
// skipped as unknown, silently, if nothing checked.
func TestDecodeDataReadsEveryMember(t *testing.T) {
	samples := map[reflect.Type]any{
		reflect.TypeFor[string]():          "v <&> é",
		reflect.TypeFor[int]():             -7,
		reflect.TypeFor[int64]():           int64(1) << 40,
		reflect.TypeFor[uint64]():          uint64(1) << 63,
		reflect.TypeFor[float64]():         0.125,
		reflect.TypeFor[bool]():            true,
		reflect.TypeFor[json.RawMessage](): json.RawMessage(`{"a":[1,"b",null]}`),
	}
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i))
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.String {
				v.Set(reflect.ValueOf([]string{"a", "b"}).Convert(v.Type()))
				return
			}
			fallthrough
		default:
			s, ok := samples[v.Type()]
			if !ok {
				t.Fatalf("no sample of %s", v.Type())
			}
			v.Set(reflect.ValueOf(s))
		}
	}
	typ := reflect.TypeFor[Data]()
	for i := range typ.NumField() {
		var d Data
		fill(reflect.ValueOf(&d).Elem().Field(i))
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var got Data
		if p := (dataParser{b: b}); !p.data(&got) {
			t.Errorf("%s: %s left to encoding/json", typ.Field(i).Name, b)
			continue
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("%s: %s read as (-want +got):\n%s", typ.Field(i).Name, b, diff)
		}
	}
}

// TestDecodeDataFastPath checks which inputs the parser reads itself: every
// shape the schemas allow must not fall back to encoding/json, or a rebuild
// is slow without any test failing.
func TestDecodeDataFastPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fast bool
	}{
		{`{"project_id":"p1","conversation_id":"c1","system":"s","title":"t"}`, true},
		{`{"project_id":"p1","conversation_id":"c2","parent":{"conversation":"p1/c1","seq":7,"event_id":"e7"}}`, true},
		{`{"text":"hello","index":3}`, true},
		{`{"model":"m1","attempt":2}`, true},
		{`{"model":"m1","usage":{"input_tokens":1200,"output_tokens":80},"latency_ms":900,"stop_reason":"end_turn"}`, true},
		{`{"error":{"type":"rate_limited","message":"later"},"retryable":true}`, true},
		{`{"call_id":"k1","name":"read_file","args":{"path":"a.go","n":[1,-2.5e3,true,null]}}`, true},
		{`{"call_id":"k1","output":"text","duration_ms":4}`, true},
		{`{"call_id":"k1","output":{"lines":["a","b"]}}`, true},
		{`{"call_id":"k1","output_ref":{"id":"sha256:ab","size":70000,"media_type":"text/plain","preview":"abc"}}`, true},
		{`{"call_id":"k1","timeout_ms":30000}`, true},
		{`{"reason":"completed"}`, true},
		// Issue 14's members.
		{`{"project_id":"p","conversation_id":"c","llm":{"provider":"openai","model":"m","base_url":"http://h/v1","api_key_env":"K","temperature":0.7,"max_tokens":100,"timeout_ms":5000},"limits":{"max_steps":3,"max_tool_calls":9,"parallel_tools":2}}`, true},
		{`{"llm":{"temperature":1e-1}}`, true},
		{`{"model":"m1","attempt":2,"step":3,"provider":"anthropic"}`, true},
		{`{"usage":{"input_tokens":1,"output_tokens":2},"tool_calls":2}`, true},
		{`{"error":{"type":"rate_limited","message":"later"},"retryable":true,"attempt":1,"retry_in_ms":1500,"status":429}`, true},
		{`{"call_id":"k1","name":"edit_file","args_error":"unexpected end of JSON input","args_text":"{\"path\":"}`, true},
		{`{"text":"","tool_calls":2}`, true},
		{`{"call_id":"k1","name":"run_command","args":{"cmd":"make"},"reason":"asks","timeout_ms":300000}`, true},
		{`{"call_id":"k1","decision":"approve","remember":"conversation","by":"ana","reason":"ok"}`, true},
		{`{"llm":{"api_key":"x"}}`, false},
		{` { "text" : "a\nb \u00e9 \ud83d\ude00" } `, true},
		{`{}`, true},
		{`{"text":null}`, false},
		{`{"Text":"a"}`, false},
		// Members Data does not have, which encoding/json skips: the
		// assistant's (instructions, files, hook decisions) among them.
		{`{"extra":1}`, true},
		{`{"model":"m1","provider":"openai","step":2,"attempt":1,"window":128000,"context_tokens":1490,"context_dropped":3,"instructions":["AGENTS.md","docs/x.md"]}`, true},
		{`{"call_id":"k1","output":"ok","duration_ms":4,"cost_usd":0.01,"files":[{"path":"a.go","before":"sha256:01","after":"sha256:02"}]}`, true},
		{`{"hook":"tool.before","decision":"allow","via":"nats","turn":2,"defaulted":false,"reason":"ok"}`, true},
		{`{"project_id":"p","conversation_id":"c","assistant":true,"loop":2,"mode":"ask","budget":{"max_tokens":100,"max_cost_usd":1.5},"worktree":{"branch":"b","path":"/w"},"delegated":{"conversation":"p/c0","call_id":"k1","depth":1},"tools":["read_file"],"history":3}`, true},
		{`{"tools":[]}`, true},
		{`{"what":"cost","limit":1.5,"used":1.5000001,"reason":"spent"}`, true},
		{`{"summary":"s","replaces":{"from_seq":3,"to_seq":9,"messages":4,"answers":2},"tokens_before":90,"tokens_after":40,"usage":{"input_tokens":80,"output_tokens":12},"cost_usd":0.003}`, true},
		{`{"Extra":1}`, false},
		{`{"extra":[1,}`, false},
		{`{"tools":[null]}`, false},
		{`{"budget":{"max_tokens":1,"max_tokens":2}}`, false},
		{`{"text":"a","text":"b"}`, false},
		{`{"index":1.5}`, false},
		{"{\"text\":\"\xff\"}", false},
		{`null`, false},
		{`{"text":"a"}x`, false},
	} {
		p := dataParser{b: []byte(tc.in)}
		if fast := p.data(&Data{}); fast != tc.fast {
			t.Errorf("%s: parsed without encoding/json %v, want %v", tc.in, fast, tc.fast)
		}
	}
}

func BenchmarkDecodeData(b *testing.B) {
	in := []byte(`{"model":"m1","usage":{"input_tokens":1200,"output_tokens":80},"latency_ms":900}`)
	b.Run("DecodeData", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeData(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var d Data
			if err := json.Unmarshal(in, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

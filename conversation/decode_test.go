package conversation

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeData checks that DecodeData gives what encoding/json gives, for
// any input, and that its result does not share memory with the input.
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
	})
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
		{`{"extra":1}`, false},
		{`{"text":"a","text":"b"}`, false},
		{`{"index":1.5}`, false},
		{"{\"text\":\"\xff\"}", false},
		{`null`, false},
		{`{"text":"a"}x`, false},
	} {
		p := dataParser{b: []byte(tc.in)}
		if _, fast := p.data(); fast != tc.fast {
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

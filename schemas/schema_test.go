package schemas

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const paramsSchema = `{
  "type": "object",
  "properties": {
    "by": {"type": "integer", "default": 1},
    "name": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "a/b": {"type": "string"},
    "nested": {
      "type": "object",
      "properties": {"depth": {"type": "integer", "default": 3}, "name": {"type": "string"}}
    }
  },
  "required": ["name"],
  "additionalProperties": false
}`

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func TestValidateNamesThePointerOfEachFailingField(t *testing.T) {
	s, err := Compile("test params", []byte(paramsSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		value string
		want  []string // pointers
	}{
		{`{"name":"x","by":2}`, nil},
		{`{"name":"x","by":"two"}`, []string{"/by"}},
		{`{"by":2}`, []string{"/name"}},
		{`{"name":"x","tags":["a",3]}`, []string{"/tags/1"}},
		{`{"name":"x","extra":true}`, []string{"/extra"}},
		{`{"name":"x","a/b":1}`, []string{"/a~1b"}},
		{`{"name":"x","nested":{"depth":1.5}}`, []string{"/nested/depth"}},
		{`{"by":"two","extra":1}`, []string{"/by", "/extra", "/name"}},
		{`[]`, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			err := s.Validate(decode(t, tt.value))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			ve, ok := errors.AsType[*ValidationError](err)
			if !ok {
				t.Fatalf("Validate = %v (%T), want *ValidationError", err, err)
			}
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Pointer)
				if f.Message == "" {
					t.Errorf("field %q has no message", f.Pointer)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pointers = %q, want %q (error: %v)", got, tt.want, err)
			}
			if ve.Pointer() != tt.want[0] || ve.Schema != "test params" {
				t.Errorf("Pointer() = %q, Schema = %q", ve.Pointer(), ve.Schema)
			}
			if !strings.Contains(err.Error(), "test params") {
				t.Errorf("error %q does not name the schema", err)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	s, err := Compile("n", []byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`))
	if err != nil {
		t.Fatal(err)
	}
	// 2^53+1 and 2^53+2 differ only when numbers are not rounded to float64.
	if err := s.ValidateJSON([]byte(`{"n":9007199254740993}`)); err != nil {
		t.Errorf("exact maximum rejected: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"n":9007199254740994}`)); err == nil {
		t.Error("value above an exact maximum accepted")
	}
	err = s.ValidateJSON([]byte(`{"n":`))
	if ve, ok := errors.AsType[*ValidationError](err); !ok || ve.Pointer() != "" {
		t.Errorf("truncated JSON: %v, want a *ValidationError at the root", err)
	}
}

func TestCompileRejectsBadSchemas(t *testing.T) {
	for _, src := range []string{
		`{`,
		`{"type":"nonsense"}`,
		`{"properties":{"a":{"minimum":"zero"}}}`,
		`{"$ref":"https://example.com/not-here.json"}`,
	} {
		if _, err := Compile("bad", []byte(src)); err == nil {
			t.Errorf("Compile(%s) succeeded", src)
		} else if !strings.Contains(err.Error(), "bad") {
			t.Errorf("Compile(%s) error %q does not name the schema", src, err)
		}
	}
}

func TestFormatsAreAsserted(t *testing.T) {
	s, err := Compile("time", []byte(`{"type":"string","format":"date-time"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Validate("yesterday") == nil {
		t.Error(`"yesterday" passed format date-time`)
	}
	if err := s.Validate("2025-01-02T03:04:05Z"); err != nil {
		t.Error(err)
	}
}

func TestApplyDefaults(t *testing.T) {
	s, err := Compile("defaults", []byte(paramsSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{`{}`, `{"by":1}`},
		{`null`, `{"by":1}`},
		{`{"by":5}`, `{"by":5}`},
		{`{"nested":{}}`, `{"by":1,"nested":{"depth":3}}`},
		{`{"nested":{"depth":0,"name":"n"}}`, `{"by":1,"nested":{"depth":0,"name":"n"}}`},
		{`"not an object"`, `"not an object"`},
	}
	for _, tt := range tests {
		in := decode(t, tt.in)
		before, _ := json.Marshal(in)
		got, _ := json.Marshal(s.ApplyDefaults(in))
		if string(got) != tt.want {
			t.Errorf("ApplyDefaults(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if after, _ := json.Marshal(in); string(after) != string(before) {
			t.Errorf("ApplyDefaults modified its input: %s became %s", before, after)
		}
	}
	// Defaults are float64, like encoding/json, so filled values compare
	// equal to values read back from the log.
	filled := s.ApplyDefaults(map[string]any{}).(map[string]any)
	if _, ok := filled["by"].(float64); !ok {
		t.Errorf("default number is %T, want float64", filled["by"])
	}
}

func TestApplyDefaultsFollowsRefAndAllOf(t *testing.T) {
	s, err := Compile("composed", []byte(`{
	  "$defs": {"base": {"properties": {"a": {"default": "A"}}}},
	  "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"b": {"default": [1]}}}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.ApplyDefaults(nil))
	if string(got) != `{"a":"A","b":[1]}` {
		t.Errorf("ApplyDefaults(nil) = %s", got)
	}
	if p := s.Properties(); !reflect.DeepEqual(p, []string{"a", "b"}) {
		t.Errorf("Properties() = %q", p)
	}
}

func TestSchemaAccessors(t *testing.T) {
	src := `{"title":"T","description":"D","properties":{"z":{},"a":{}}}`
	s, err := Compile("acc", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "acc" || s.Title() != "T" || s.Description() != "D" || string(s.Source()) != src {
		t.Errorf("accessors: %q %q %q %q", s.Name(), s.Title(), s.Description(), s.Source())
	}
	if !reflect.DeepEqual(s.Properties(), []string{"a", "z"}) {
		t.Errorf("Properties() = %q", s.Properties())
	}
	b, err := json.Marshal(map[string]any{"schema": s})
	if err != nil || string(b) != `{"schema":{"title":"T","description":"D","properties":{"z":{},"a":{}}}}` {
		t.Errorf("MarshalJSON: %s, %v", b, err)
	}
	s.Source()[0] = 'X'
	if string(s.Source()) != src {
		t.Error("Source() exposes the schema's own bytes")
	}
}
